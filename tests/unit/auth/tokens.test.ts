import { grants, scopeProblem } from '../../../src/auth/scopes';
import { newToken, parseTokensFile, tokenMatcher } from '../../../src/auth/tokensFile';

const names = ['posts', 'books'];

describe('the tokens file', () => {
  test('holds no plain token, nor its secret', () => {
    const { entry, token } = newToken('reporting', ['*:read']);
    const text = JSON.stringify({ version: 1, tokens: [entry] });
    const secret = token.split('_').slice(2).join('_');
    expect(text).not.toContain(token);
    expect(text).not.toContain(secret);
    expect(entry.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  test('a token is found by its id and checked against its salted hash', () => {
    const a = newToken('a', ['posts:read']);
    const b = newToken('b', ['books:write']);
    const match = tokenMatcher(parseTokensFile(JSON.stringify({ version: 1, tokens: [a.entry, b.entry] }), names));
    expect(match(a.token)).toEqual({ name: 'a', scopes: ['posts:read'] });
    expect(match(b.token)).toEqual({ name: 'b', scopes: ['books:write'] });
    // b's secret under a's id, and a's with one character changed
    expect(match(`rt_${a.entry.id}_${b.token.slice(-43)}`)).toBeUndefined();
    expect(match(a.token.slice(0, -1) + (a.token.endsWith('x') ? 'y' : 'x'))).toBeUndefined();
    expect(match('not-a-file-token-at-all')).toBeUndefined();
  });

  test('two tokens with one name and one salt differ, and so do their hashes', () => {
    const one = newToken('same', ['posts:read']);
    const two = newToken('same', ['posts:read']);
    expect(one.token).not.toBe(two.token);
    expect(one.entry.salt).not.toBe(two.entry.salt);
    expect(one.entry.hash).not.toBe(two.entry.hash);
  });

  test.each([
    ['not JSON', '{', /not JSON/],
    ['no version', '{"tokens": []}', /version/],
    [
      'an unknown collection',
      JSON.stringify({ version: 1, tokens: [{ ...newToken('x', ['posts:read']).entry, scopes: ['pets:read'] }] }),
      /names no collection/,
    ],
    [
      'a bad scope',
      JSON.stringify({ version: 1, tokens: [{ ...newToken('x', ['posts:read']).entry, scopes: ['posts'] }] }),
      /is not a scope/,
    ],
    [
      'a name twice',
      JSON.stringify({ version: 1, tokens: [newToken('x', ['posts:read']).entry, newToken('x', ['posts:read']).entry] }),
      /used twice/,
    ],
    [
      'a plain token where the hash goes',
      JSON.stringify({ version: 1, tokens: [{ ...newToken('x', ['posts:read']).entry, hash: 'secret' }] }),
      /hash must be/,
    ],
  ])('refuses %s', (_name, text, message) => {
    expect(() => parseTokensFile(text, names)).toThrow(message);
  });
});

describe('scopes', () => {
  test.each<[string[], string, boolean]>([
    [['posts:read'], 'posts:read', true],
    [['posts:read'], 'posts:write', false],
    [['posts:write'], 'posts:read', false],
    [['*:read'], 'books:read', true],
    [['*:read'], 'books:write', false],
    [['books:*'], 'books:write', true],
    [['books:*'], 'posts:read', false],
    [['*:*'], 'posts:write', true],
    [[], 'posts:read', false],
  ])('%j grants %s: %s', (held, needed, want) => {
    expect(grants(new Set(held), needed)).toBe(want);
  });

  test.each([
    ['posts:read', undefined],
    ['*:write', undefined],
    ['pets:read', /names no collection/],
    ['posts:delete', /is not a scope/],
    ['posts', /is not a scope/],
  ])('%s', (scope, want) => {
    const problem = scopeProblem(scope, names);
    if (want) expect(problem).toMatch(want);
    else expect(problem).toBeUndefined();
  });
});

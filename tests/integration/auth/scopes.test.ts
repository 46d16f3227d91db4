import { newToken, type TokensFile } from '../../../src/auth/tokensFile';
import { loadSpec } from '../../../src/spec';
import { startTestApp, type TestApp } from '../../helpers/app';
import { byName } from '../../helpers/fixtures';

// Every operation that names scopes in the spec, taken from the spec itself: a token without its
// scope is refused with 403 (nothing read or changed), a token with it is served.
const spec = loadSpec();
const operations = Object.entries(spec.paths).flatMap(([path, item]) =>
  Object.entries(item ?? {}).flatMap(([method, op]) => {
    const scopes = (op as Record<string, unknown>)?.['x-required-scopes'] as string[] | undefined;
    return scopes ? [{ path, method: method.toUpperCase(), operationId: String((op as { operationId: string }).operationId), scopes }] : [];
  }),
);

/** Each scope's complement on the same collection: read for write, write for read. */
const other = (scope: string) => scope.replace(/:(read|write)$/, (_m, a: string) => (a === 'read' ? ':write' : ':read'));

describe('scopes from the spec', () => {
  let app: TestApp;
  const tokens = new Map<string, string>();
  beforeAll(async () => {
    const file: TokensFile = { version: 1, tokens: [] };
    const scopes = [...new Set(operations.flatMap((o) => o.scopes.flatMap((s) => [s, other(s)])))];
    for (const scope of [...scopes, '*:read', 'posts:*']) {
      const { entry, token } = newToken(scope.replace(/[:*]/g, '-'), [scope]);
      file.tokens.push(entry);
      tokens.set(scope, token);
    }
    app = await startTestApp({ tokensFile: file });
  });
  afterAll(() => app.close());

  const auth = (scope: string) => ({ authorization: `Bearer ${tokens.get(scope)}` });
  const collectionOf = (path: string) => path.split('/')[2];

  /** A request the operation serves with a 2xx, on a record made for it with a write token. */
  async function validRequest(op: (typeof operations)[number]): Promise<{ path: string; body?: unknown }> {
    const c = collectionOf(op.path);
    const fixture = byName[c];
    const made = await app.request('POST', `/api/${c}/`, {
      body: fixture.valid(Math.floor(Math.random() * 1e9)),
      headers: auth(`${c}:write`),
    });
    expect(made.status).toBe(201);
    const path = op.path.replace('{id}', String(made.body.id));
    if (op.operationId.startsWith('bulkDelete')) return { path, body: { ids: [made.body.id] } };
    if (op.operationId.startsWith('bulkCreate')) return { path, body: [fixture.valid(Math.floor(Math.random() * 1e9))] };
    if (op.method === 'PATCH') return { path, body: fixture.patch };
    if (op.method === 'POST' || op.method === 'PUT') return { path, body: fixture.valid(Math.floor(Math.random() * 1e9)) };
    return { path };
  }

  test('every /api/ operation names its scope, in its description too', () => {
    const apiOperations = Object.entries(spec.paths).filter(([p]) => p.startsWith('/api/'));
    const count = apiOperations.reduce((n, [, item]) => n + Object.keys(item ?? {}).filter((k) => k !== 'parameters').length, 0);
    expect(operations).toHaveLength(count);
    for (const op of operations) {
      const description = (spec.paths[op.path] as Record<string, { description: string }>)[op.method.toLowerCase()].description;
      for (const s of op.scopes) expect(description).toContain(`\`${s}\``);
    }
  });

  test.each(operations.map((o) => [o.operationId, o] as const))('%s: 403 without its scope, served with it', async (_id, op) => {
    const { path, body } = await validRequest(op);
    const [needed] = op.scopes;
    const refused = await app.request(op.method, path, { body, headers: auth(other(needed)) });
    expect(refused.status).toBe(403);
    // HEAD answers the status and headers alone.
    if (op.method !== 'HEAD') {
      expect(refused.body.detail).toContain(needed);
      expect(refused.body.errors).toEqual([{ field: 'Authorization', message: `needs the scope ${needed}` }]);
    }
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer realm="records", error="insufficient_scope", scope="${needed}"`);
    const served = await app.request(op.method, path, { body, headers: auth(needed) });
    expect([200, 201, 204]).toContain(served.status);
  });

  test('a refused write changes nothing', async () => {
    const before = await app.request('GET', '/api/books/', { headers: auth('*:read') });
    const refused = await app.request('POST', '/api/books/bulk/', { body: [byName.books.valid(7001)], headers: auth('*:read') });
    expect(refused.status).toBe(403);
    const after = await app.request('GET', '/api/books/', { headers: auth('*:read') });
    expect(after.body.count).toBe(before.body.count);
  });

  test.each([
    ['*:read reads every collection', '*:read', 'GET', '/api/users/', 200],
    ['*:read cannot write', '*:read', 'POST', '/api/users/bulk-delete/', 403],
    ['posts:* reads posts', 'posts:*', 'GET', '/api/posts/', 200],
    ['posts:* cannot read books', 'posts:*', 'GET', '/api/books/', 403],
  ])('%s', async (_name, scope, method, path, status) => {
    const res = await app.request(method, path, { headers: auth(scope), body: method === 'POST' ? { ids: [1] } : undefined });
    expect(res.status).toBe(status);
  });

  test('the access log names the token, never the token itself', async () => {
    await app.request('GET', '/api/posts/', { headers: auth('*:read') });
    const line = app.logs.filter((l) => l.msg === 'request' && l.path === '/api/posts/').at(-1)!;
    expect(line.tokenName).toBe('--read');
    expect(JSON.stringify(app.logs)).not.toContain(tokens.get('*:read'));
  });

  test.each([
    ['no token', undefined, 'Bearer realm="records"'],
    ['an unknown token of the file form', `Bearer rt_000000000000_${'A'.repeat(43)}`, 'Bearer realm="records", error="invalid_token"'],
  ])('%s: 401', async (_name, authorization, challenge) => {
    const res = await app.request('GET', '/api/posts/', { headers: authorization ? { authorization } : {} });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(challenge);
  });

  test('a known id with a wrong secret: 401', async () => {
    const good = tokens.get('*:read')!;
    const res = await app.request('GET', '/api/posts/', {
      headers: { authorization: `Bearer ${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}` },
    });
    expect(res.status).toBe(401);
  });
});

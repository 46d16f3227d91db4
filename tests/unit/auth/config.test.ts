import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newToken } from '../../../src/auth/tokensFile';
import { ConfigError, loadConfig } from '../../../src/config';

// TOKENS_FILE, the JWT variables and the per-token limit as the service reads them at start: a
// bad value is one line naming the variable.
const dir = mkdtempSync(join(tmpdir(), 'records-auth-config-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const { entry } = newToken('reporting', ['*:read']);
const tokens = file('tokens.json', JSON.stringify({ version: 1, tokens: [entry] }));
const pem = (type: 'rsa' | 'ed25519' | 'x25519') =>
  generateKeyPairSync(type as 'rsa', { modulusLength: 2048 })
    .publicKey.export({ type: 'spki', format: 'pem' })
    .toString();
const rsaPem = file('rsa.pem', pem('rsa'));
const jwt = { JWT_PUBLIC_KEY_FILE: rsaPem, JWT_ISSUER: 'https://idp.test/', JWT_AUDIENCE: 'records' };

test('TOKENS_FILE, JWT and the per-token limit are read', () => {
  const config = loadConfig({ TOKENS_FILE: tokens, ...jwt, RATE_LIMIT_PER_TOKEN_PER_MINUTE: '120' });
  expect(config.tokensFile?.file.tokens.map((t) => t.name)).toEqual(['reporting']);
  expect(config.jwt).toMatchObject({ issuer: 'https://idp.test/', audience: 'records', scopesClaim: 'scope', clockSkewSeconds: 30 });
  expect(config.tokenRateLimitPerMinute).toBe(120);
});

test.each<[string, NodeJS.ProcessEnv, RegExp]>([
  ['a tokens file that is missing', { TOKENS_FILE: join(dir, 'nope.json') }, /^TOKENS_FILE: cannot read .*nope\.json \(ENOENT\)$/],
  ['a tokens file of plain tokens', { TOKENS_FILE: file('plain.txt', 'tok_abcdefghijklmnop\n') }, /^TOKENS_FILE .*: is not JSON$/],
  ['a JWT key without issuer', { JWT_PUBLIC_KEY_FILE: rsaPem, JWT_AUDIENCE: 'records' }, /^JWT_ISSUER is required/],
  ['a JWT key without audience', { JWT_PUBLIC_KEY_FILE: rsaPem, JWT_ISSUER: 'x' }, /^JWT_AUDIENCE is required/],
  ['both JWT key files', { ...jwt, JWT_JWKS_FILE: tokens }, /^set JWT_PUBLIC_KEY_FILE or JWT_JWKS_FILE, not both$/],
  ['an issuer without a key', { JWT_ISSUER: 'x' }, /^JWT_ISSUER is set but neither/],
  ['a PEM that is no key', { ...jwt, JWT_PUBLIC_KEY_FILE: file('bad.pem', 'hello') }, /holds no PEM public key$/],
  ['an X25519 key, which cannot sign', { ...jwt, JWT_PUBLIC_KEY_FILE: file('x.pem', pem('x25519')) }, /a x25519 key; use RSA/],
  [
    'a key set with a private key',
    {
      ...jwt,
      JWT_PUBLIC_KEY_FILE: undefined,
      JWT_JWKS_FILE: file('priv.json', JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'a', d: 'b' }] })),
    },
    /holds a private key/,
  ],
  [
    'a key set with a shared secret',
    { ...jwt, JWT_PUBLIC_KEY_FILE: undefined, JWT_JWKS_FILE: file('oct.json', JSON.stringify({ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] })) },
    /key type oct/,
  ],
  ['a skew of minutes', { ...jwt, JWT_CLOCK_SKEW_SECONDS: '3600' }, /^JWT_CLOCK_SKEW_SECONDS must be between 0 and 300/],
  ['a per-token limit of zero', { RATE_LIMIT_PER_TOKEN_PER_MINUTE: '0' }, /^RATE_LIMIT_PER_TOKEN_PER_MINUTE must be between 1/],
])('%s is refused', (_name, env, want) => {
  let error: unknown;
  try {
    loadConfig(env);
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).toMatch(want);
});

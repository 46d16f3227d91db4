import { createPublicKey } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, exportSPKI, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { loadConfig } from '../../../src/config';
import { startTestApp, type TestApp } from '../../helpers/app';

// JWT bearer tokens: keys are made here, at test time. Every way a token can be wrong is a 401;
// a good one is served within its scopes.
const ISSUER = 'https://idp.example.test/';
const AUDIENCE = 'records-api';
type Key = Awaited<ReturnType<typeof generateKeyPair>>;
const keys: Record<'RS256' | 'ES256' | 'EdDSA' | 'stranger', Key> = {} as never;
const now = () => Math.floor(Date.now() / 1000);

function sign(alg: string, key: Key, claims: JWTPayload = {}, header: Record<string, unknown> = {}): Promise<string> {
  const payload = { scope: 'posts:read', iss: ISSUER, aud: AUDIENCE, sub: 'reporting-job', iat: now(), exp: now() + 300, ...claims };
  return new SignJWT(JSON.parse(JSON.stringify(payload)) as JWTPayload).setProtectedHeader({ alg, ...header }).sign(key.privateKey);
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

let pemApp: TestApp;
let jwksApp: TestApp;
beforeAll(async () => {
  keys.RS256 = await generateKeyPair('RS256');
  keys.ES256 = await generateKeyPair('ES256');
  keys.EdDSA = await generateKeyPair('EdDSA');
  keys.stranger = await generateKeyPair('RS256');
  const dir = mkdtempSync(join(tmpdir(), 'records-jwt-'));
  const pemFile = join(dir, 'key.pem');
  writeFileSync(pemFile, await exportSPKI(keys.RS256.publicKey));
  const jwksFile = join(dir, 'jwks.json');
  const jwk = async (k: Key, kid: string, alg: string) => ({ ...(await exportJWK(k.publicKey)), kid, alg });
  writeFileSync(jwksFile, JSON.stringify({ keys: [await jwk(keys.ES256, 'es', 'ES256'), await jwk(keys.EdDSA, 'ed', 'EdDSA')] }));
  // Through the configuration, as the service reads it.
  const fromPem = loadConfig({ JWT_PUBLIC_KEY_FILE: pemFile, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE });
  const fromJwks = loadConfig({ JWT_JWKS_FILE: jwksFile, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE, JWT_SCOPES_CLAIM: 'scp' });
  pemApp = await startTestApp({ jwt: fromPem.jwt });
  jwksApp = await startTestApp({ jwt: fromJwks.jwt });
});
afterAll(async () => {
  await pemApp?.close();
  await jwksApp?.close();
});

const get = (app: TestApp, token: string, path = '/api/posts/') =>
  app.request('GET', path, { headers: { authorization: `Bearer ${token}` } });

test('a good RS256 token is served, and the log names its subject', async () => {
  const res = await get(pemApp, await sign('RS256', keys.RS256));
  expect(res.status).toBe(200);
  expect(pemApp.logs.filter((l) => l.msg === 'request').at(-1)).toMatchObject({ status: 200, tokenName: 'jwt:reporting-job' });
});

test.each(['ES256', 'EdDSA'] as const)('a good %s token from the key set is served (scopes as an array claim)', async (alg) => {
  const token = await sign(alg, keys[alg], { scp: ['posts:read', 'books:write'] }, { kid: alg === 'ES256' ? 'es' : 'ed' });
  expect((await get(jwksApp, token)).status).toBe(200);
  expect((await get(jwksApp, token, '/api/books/')).status).toBe(403);
});

test('a token within its scopes only: 403 naming the scope outside them', async () => {
  const res = await get(pemApp, await sign('RS256', keys.RS256), '/api/users/');
  expect(res.status).toBe(403);
  expect(res.body.detail).toContain('users:read');
});

test('a clock skew of a few seconds is allowed', async () => {
  expect((await get(pemApp, await sign('RS256', keys.RS256, { exp: now() - 10 }))).status).toBe(200);
  expect((await get(pemApp, await sign('RS256', keys.RS256, { nbf: now() + 10 }))).status).toBe(200);
});

test.each<[string, () => Promise<string>]>([
  ['a wrong signature (another key)', () => sign('RS256', keys.stranger)],
  ['a wrong issuer', () => sign('RS256', keys.RS256, { iss: 'https://evil.example.test/' })],
  ['a wrong audience', () => sign('RS256', keys.RS256, { aud: 'another-api' })],
  ['expired', () => sign('RS256', keys.RS256, { exp: now() - 120 })],
  ['not yet valid', () => sign('RS256', keys.RS256, { nbf: now() + 120 })],
  ['no expiry', () => sign('RS256', keys.RS256, { exp: undefined })],
  [
    'alg none',
    () =>
      Promise.resolve(`${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: ISSUER, aud: AUDIENCE, exp: now() + 300, scope: 'posts:read' })}.`),
  ],
  [
    'a signature cut off',
    async () => {
      const [h, p] = (await sign('RS256', keys.RS256)).split('.');
      return `${h}.${p}.`;
    },
  ],
  [
    'a payload changed after signing',
    async () => {
      const [h, , s] = (await sign('RS256', keys.RS256)).split('.');
      return `${h}.${b64({ iss: ISSUER, aud: AUDIENCE, exp: now() + 300, scope: '*:write', sub: 'x' })}.${s}`;
    },
  ],
  [
    'HS256 keyed with the public key (algorithm confusion)',
    async () => {
      const pem = createPublicKey(await exportSPKI(keys.RS256.publicKey)).export({ type: 'spki', format: 'pem' });
      return new SignJWT({ scope: 'posts:read' })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime(now() + 300)
        .sign(new TextEncoder().encode(String(pem)));
    },
  ],
])('%s: 401', async (_name, make) => {
  const res = await get(pemApp, await make());
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toBe('Bearer realm="records", error="invalid_token"');
});

test('a token for the key set, sent to the PEM deployment: 401', async () => {
  expect((await get(pemApp, await sign('ES256', keys.ES256))).status).toBe(401);
});

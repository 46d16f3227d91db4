import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropTestDatabase, freshConfig } from '../../helpers/db';
import { type Call, send, sleep } from '../../helpers/load';
import { databaseUrl, type RunningService, startService } from '../../helpers/service';

// Named tokens made by `npm run token`, served by two workers: the file holds no token, scopes
// apply, and each token's quota is counted once across the workers (the primary keeps the counts).
const QUOTA = 20;
const config = freshConfig();
const dir = mkdtempSync(join(tmpdir(), 'records-tokens-'));
const file = join(dir, 'tokens.json');
let service: RunningService;
const made: Record<string, string> = {};
const output: Record<string, string> = {};

function createToken(name: string, scopes: string): string {
  const out = execFileSync('npx', ['tsx', 'scripts/token.ts', 'create', '--name', name, '--scopes', scopes, '--file', file], {
    encoding: 'utf8',
  });
  output[name] = out;
  return out.trimEnd().split('\n').at(-1)!;
}

beforeAll(async () => {
  made.reporting = createToken('reporting', '*:read');
  made.loader = createToken('loader', 'posts:read posts:write');
  service = await startService(
    {
      DATABASE_URL: databaseUrl(config),
      WEB_CONCURRENCY: '2',
      TOKENS_FILE: file,
      RATE_LIMIT_PER_TOKEN_PER_MINUTE: String(QUOTA),
      RATE_LIMIT_PER_MINUTE: '10000',
      TRUST_PROXY: '1',
    },
    120000,
  );
}, 180000);
afterAll(async () => {
  // Stopped as a user stops it: SIGKILL of the primary alone left a worker running, which kept
  // jest waiting on its output for good (seen once in CI).
  await service?.stop();
  await dropTestDatabase(config);
});

const alone = (call: Call, id: string) => send(service.url, new Agent({ keepAlive: false }), call, id);
const bearer = (name: string) => ({ authorization: `Bearer ${made[name]}` });

test('npm run token prints the token alone on its last line; the file keeps only its hash', () => {
  for (const name of ['reporting', 'loader']) {
    expect(made[name]).toMatch(/^rt_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(output[name].split('\n').filter((l) => l.includes(made[name]))).toEqual([made[name]]);
  }
  const text = readFileSync(file, 'utf8');
  for (const token of Object.values(made)) {
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.slice(16));
  }
  expect(JSON.parse(text).tokens.map((t: { name: string; scopes: string[] }) => [t.name, t.scopes])).toEqual([
    ['reporting', ['*:read']],
    ['loader', ['posts:read', 'posts:write']],
  ]);
});

test('a token is served within its scopes and refused outside them', async () => {
  const read = await alone({ method: 'GET', path: '/api/books/', headers: bearer('reporting') }, 'scope-read');
  const write = await alone(
    { method: 'POST', path: '/api/posts/bulk-delete/', body: { ids: [1] }, headers: bearer('reporting') },
    'scope-write',
  );
  expect([read.status, write.status]).toEqual([200, 403]);
});

test("a token's quota is counted once across workers, apart from other tokens and addresses", async () => {
  // Each request from an address of its own: only the token's quota can run out.
  const calls = Array.from({ length: QUOTA + 8 }, (_, i) => ({
    method: 'GET',
    path: '/api/posts/0/',
    headers: { ...bearer('loader'), 'x-forwarded-for': `10.9.0.${i + 1}` },
  }));
  const ids = calls.map((_, i) => `per-token-${i}`);
  const outcomes = await Promise.all(calls.map((call, i) => alone(call, ids[i])));
  expect(outcomes.filter((o) => o.error || o.contract || (o.status !== 404 && o.status !== 429))).toEqual([]);
  expect(outcomes.filter((o) => o.status === 404)).toHaveLength(QUOTA);
  expect(outcomes.filter((o) => o.status === 429)).toHaveLength(8);
  // Another token still has its whole quota.
  expect((await alone({ method: 'GET', path: '/api/posts/0/', headers: bearer('reporting') }, 'other-token')).status).toBe(404);

  const deadline = Date.now() + 10000;
  let lines: Record<string, any>[] = [];
  while (Date.now() < deadline) {
    lines = service.lines.filter((l) => l.msg === 'request' && ids.includes(l.requestId));
    if (lines.length === ids.length) break;
    await sleep(100);
  }
  expect(new Set(lines.map((l) => l.worker))).toEqual(new Set([1, 2]));
  expect(new Set(lines.map((l) => l.tokenName))).toEqual(new Set(['loader']));
  expect(service.stdout()).not.toContain(made.loader);
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { newToken } from '../../../src/auth/tokensFile';
import { freePort } from '../../../scripts/lib/ports';
import { dropTestDatabase, freshConfig } from '../../helpers/db';
import { type Outcome, send, sleep } from '../../helpers/load';
import { connectTestRedis, deleteKeys, keysUnder, privateRedis, REDIS_URL, uniquePrefix } from '../../helpers/redis';
import { databaseUrl, type RunningService, type ServiceProcess, spawnService, startService } from '../../helpers/service';

// REDIS_URL: the rate limit counts in Redis, so that every worker of every instance (host) of a
// deployment draws on one quota per client; a Redis that is down, or goes away, never fails or
// holds a request. Real processes, as `npm start` runs them.
const QUOTA = 12;
const config = freshConfig();
let redis: Awaited<ReturnType<typeof connectTestRedis>>;
const started: ServiceProcess[] = [];
beforeAll(async () => {
  redis = await connectTestRedis();
});
afterAll(async () => {
  for (const s of started) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  redis?.destroy();
  await dropTestDatabase(config);
});

async function start(env: Record<string, string>): Promise<RunningService> {
  const service = await startService(
    { DATABASE_URL: databaseUrl(config), RATE_LIMIT_PER_MINUTE: String(QUOTA), TRUST_PROXY: '1', WEB_CONCURRENCY: '1', ...env },
    120000,
  );
  started.push(service);
  return service;
}

/**
 * `count` GETs of a record that does not exist (a 404 that never waits on a busy database,
 * counted all the same), from one client address, at once, each on a connection of its own,
 * spread over the services in turn.
 */
function burst(services: RunningService[], count: number, client: string, tag: string): Promise<Outcome[]> {
  const call = { method: 'GET', path: '/api/posts/0/', headers: { 'x-forwarded-for': client } };
  return Promise.all(
    Array.from({ length: count }, (_, i) => send(services[i % services.length].url, new Agent({ keepAlive: false }), call, `${tag}-${i}`)),
  );
}

/** Status counts, and every outcome that is neither 404 nor 429 or breaks the contract. */
function tally(outcomes: Outcome[]) {
  return {
    answered: outcomes.filter((o) => o.status === 404).length,
    limited: outcomes.filter((o) => o.status === 429).length,
    wrong: outcomes.filter((o) => o.error || o.contract || (o.status !== 404 && o.status !== 429)),
  };
}

/**
 * The request lines of a burst, once all have arrived (a process's log reaches stdout up to a
 * second late); anything logged before them has arrived too.
 */
async function logged(services: ServiceProcess[], tag: string, count: number): Promise<Record<string, any>[]> {
  const deadline = Date.now() + 10000;
  for (;;) {
    const lines = services.flatMap((s, i) =>
      s.lines.filter((l) => l.msg === 'request' && String(l.requestId).startsWith(`${tag}-`)).map((l) => ({ ...l, instance: i })),
    );
    if (lines.length >= count || Date.now() > deadline) return lines;
    await sleep(100);
  }
}

const warnings = (s: ServiceProcess) => s.lines.filter((l) => l.level === 'warn' && String(l.msg).startsWith('rate limit:'));
const errors = (s: ServiceProcess) => s.lines.filter((l) => l.level === 'error' || l.level === 'fatal');

async function untilLine(s: ServiceProcess, match: (l: Record<string, any>) => boolean, ms = 30000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!s.lines.some(match)) {
    if (Date.now() > deadline) throw new Error(`no such log line within ${ms} ms:\n${s.stdout()}${s.stderr()}`);
    await sleep(50);
  }
}

/** SIGTERM: the Redis client closes with the rest, and the process exits 0 at once. */
async function stopsCleanly(s: ServiceProcess): Promise<void> {
  expect(await s.stop('SIGTERM', 15000)).toEqual({ code: 0, signal: null });
  expect(s.lines.at(-1)).toMatchObject({ msg: 'stopped' });
  expect(s.stderr()).toBe('');
}

// The prefix a deployment gets when it sets none: its database's name (or SQLite file).
const derivedPrefix = `records:${config.client === 'mysql' ? config.database : resolve(config.filename)}:rl:`;

describe.each<[string, { instances: Record<string, string>[]; prefix: string; explicit: boolean }]>([
  ['two worker processes', { instances: [{ WEB_CONCURRENCY: '2' }], prefix: uniquePrefix('workers'), explicit: true }],
  [
    'two instances (hosts) on one database, with the prefix named after it',
    { instances: [{}, {}], prefix: derivedPrefix, explicit: false },
  ],
])('%s, one Redis', (_name, { instances, prefix, explicit }) => {
  let services: RunningService[];
  beforeAll(async () => {
    const env = { REDIS_URL, ...(explicit ? { RATE_LIMIT_PREFIX: prefix } : {}) };
    services = [];
    for (const own of instances) services.push(await start({ ...env, ...own }));
  }, 300000);
  afterAll(() => deleteKeys(redis, prefix));

  test('the start-up log says where the counts are', () => {
    for (const s of services) {
      expect(s.lines.find((l) => l.msg === 'rate limit per client address')).toMatchObject({
        perMinute: QUOTA,
        counts: 'redis',
        redis: 'redis://127.0.0.1:6379/0',
        prefix,
      });
    }
  });

  test('the quota and 10 more requests over every process: exactly the quota is answered, the rest 429', async () => {
    const outcomes = await burst(services, QUOTA + 10, '10.9.0.1', 'quota');
    const { answered, limited, wrong } = tally(outcomes);
    expect(wrong).toEqual([]);
    expect({ answered, limited }).toEqual({ answered: QUOTA, limited: 10 });
    // 429 is problem+json (checked against the spec by send) with Retry-After within the window.
    for (const o of outcomes.filter((x) => x.status === 429)) expect(Number(o.retryAfter)).toBeGreaterThanOrEqual(1);
    for (const o of outcomes.filter((x) => x.status === 429)) expect(Number(o.retryAfter)).toBeLessThanOrEqual(60);
    // Every process took its share, and one key holds the client's count.
    const lines = await logged(services, 'quota', QUOTA + 10);
    expect(new Set(lines.map((l) => `${l.instance}/${l.worker}`)).size).toBe(2);
    expect(await keysUnder(redis, prefix)).toEqual([`${prefix}10.9.0.1`]);
    expect(await redis.get(`${prefix}10.9.0.1`)).toBe(String(QUOTA + 10));
    expect(services.flatMap(warnings)).toEqual([]);
  }, 60000);

  test('SIGTERM stops every process with exit 0', async () => {
    for (const s of services) await stopsCleanly(s);
  }, 60000);
});

// Per-token quotas in the same Redis: one token's requests through two instances, each from an
// address of its own, so only the token's quota can run out.
describe('two instances, one Redis: a per-token quota', () => {
  const prefix = uniquePrefix('tokens');
  const { entry, token } = newToken('loader', ['posts:read']);
  let services: RunningService[];
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'records-redis-tokens-'));
    const file = join(dir, 'tokens.json');
    writeFileSync(file, JSON.stringify({ version: 1, tokens: [entry] }));
    const env = {
      REDIS_URL,
      RATE_LIMIT_PREFIX: prefix,
      TOKENS_FILE: file,
      RATE_LIMIT_PER_TOKEN_PER_MINUTE: String(QUOTA),
      RATE_LIMIT_PER_MINUTE: '10000',
    };
    services = [await start(env), await start(env)];
  }, 300000);
  afterAll(() => deleteKeys(redis, prefix));

  test('the quota and 6 more over both instances: exactly the quota is answered, one key counts them', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: QUOTA + 6 }, (_, i) =>
        send(
          services[i % 2].url,
          new Agent({ keepAlive: false }),
          { method: 'GET', path: '/api/posts/0/', headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': `10.9.3.${i + 1}` } },
          `token-${i}`,
        ),
      ),
    );
    const { answered, limited, wrong } = tally(outcomes);
    expect(wrong).toEqual([]);
    expect({ answered, limited }).toEqual({ answered: QUOTA, limited: 6 });
    const lines = await logged(services, 'token', QUOTA + 6);
    expect(new Set(lines.map((l) => l.instance))).toEqual(new Set([0, 1]));
    expect(new Set(lines.map((l) => l.tokenName))).toEqual(new Set(['loader']));
    const tokenKeys = (await keysUnder(redis, prefix)).filter((k) => k.includes('loader'));
    expect(tokenKeys).toEqual([`${prefix}token:token:loader`]);
    expect(await redis.get(tokenKeys[0])).toBe(String(QUOTA + 6));
  }, 60000);

  test('SIGTERM stops both with exit 0', async () => {
    for (const s of services) await stopsCleanly(s);
  }, 60000);
});

describe('a Redis that nothing answers on', () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await start({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
  }, 150000);

  test('every request is answered, uncounted, and the log says so in one warning', async () => {
    const { answered, limited, wrong } = tally(await burst([service], QUOTA + 5, '10.9.1.1', 'down'));
    expect(wrong).toEqual([]);
    expect({ answered, limited }).toEqual({ answered: QUOTA + 5, limited: 0 });
    await logged([service], 'down', QUOTA + 5);
    expect(warnings(service)).toEqual([
      expect.objectContaining({
        redis: expect.stringMatching(/^redis:\/\/127\.0\.0\.1:\d+\/0$/),
        error: expect.stringContaining('ECONNREFUSED'),
      }),
    ]);
    expect(errors(service)).toEqual([]);
  }, 60000);

  test('SIGTERM: a client still trying to connect does not hold the process', () => stopsCleanly(service), 30000);
});

describe('a Redis that goes away and comes back', () => {
  const own = privateRedis();
  let service: RunningService;
  beforeAll(async () => {
    await own.start();
    service = await start({ REDIS_URL: own.url, RATE_LIMIT_PREFIX: uniquePrefix('outage') });
  }, 150000);
  afterAll(() => own.stop());

  test('counted while up; answered uncounted while down, with one warning; counted again once back', async () => {
    expect(tally(await burst([service], 3, '10.9.2.1', 'before'))).toMatchObject({ answered: 3, limited: 0, wrong: [] });

    await own.stop();
    const during = tally(await burst([service], QUOTA + 5, '10.9.2.1', 'during'));
    expect(during).toMatchObject({ answered: QUOTA + 5, limited: 0, wrong: [] });
    await logged([service], 'during', QUOTA + 5);
    expect(warnings(service)).toHaveLength(1);

    // A new, empty Redis on the same address: the client reconnects by itself, the scripts are loaded again.
    await own.start();
    await untilLine(service, (l) => l.msg === 'rate limit: Redis counts requests again');
    const after = tally(await burst([service], QUOTA + 2, '10.9.2.1', 'after'));
    expect(after).toMatchObject({ answered: QUOTA, limited: 2, wrong: [] });
    await logged([service], 'after', QUOTA + 2);
    expect(warnings(service)).toHaveLength(1);
    expect(errors(service)).toEqual([]);
  }, 90000);

  test('SIGTERM stops it with exit 0', () => stopsCleanly(service), 30000);
});

test.each<[string, { given: string; want: string }]>([
  [
    'no scheme',
    {
      given: 'localhost:6379',
      want: 'REDIS_URL: unknown scheme "localhost"; expected redis://[user:password@]host[:port][/db-number] or rediss://...',
    },
  ],
  [
    'a database that is no number, with a password not to echo',
    {
      given: 'redis://app:s3cret@127.0.0.1:6379/records',
      want: 'REDIS_URL: "/records" is not a database number; expected redis://[user:password@]host[:port][/db-number] or rediss://...',
    },
  ],
])(
  'a malformed REDIS_URL (%s) stops the start with one line and exit 1',
  async (_name, { given, want }) => {
    const proc = spawnService({ DATABASE_URL: databaseUrl(config), RATE_LIMIT_PER_MINUTE: '5', REDIS_URL: given, WEB_CONCURRENCY: '2' });
    started.push(proc);
    expect((await proc.exited).code).toBe(1);
    expect(proc.stderr().split('\n').filter(Boolean)).toEqual([`records API failed to start: ${want}`]);
    expect(proc.stdout()).not.toContain('s3cret');
  },
  60000,
);

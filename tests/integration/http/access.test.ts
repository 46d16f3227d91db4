import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { freePort } from '../../../scripts/lib/ports';
import { connectRedisCounts, type RedisCounts } from '../../../src/http/redisCounts';
import { createLogger, silentLogger } from '../../../src/logger';
import { loadSpec } from '../../../src/spec';
import { startTestApp, type TestApp } from '../../helpers/app';
import { fixtures } from '../../helpers/fixtures';
import { connectTestRedis, deleteKeys, REDIS_URL, uniquePrefix } from '../../helpers/redis';

// Bearer tokens, the rate limit, CORS, security headers and the body limit, each on an app of
// its own configured for it.
const TOKEN = 'tok_access_test_0123456789abcdef';
const OTHER = 'tok_another_token_0123456789abcd';
const post = fixtures[0].valid(1);

describe('bearer tokens (API_TOKENS)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ apiTokens: [OTHER, TOKEN] });
  });
  afterAll(() => app.close());

  test.each<
    [string, { given: { method: string; path: string; headers?: Record<string, string> }; want: { status: number; challenge?: string } }]
  >([
    ['no Authorization', { given: { method: 'GET', path: '/api/posts/' }, want: { status: 401, challenge: 'Bearer realm="records"' } }],
    [
      'another scheme',
      {
        given: { method: 'GET', path: '/api/posts/', headers: { authorization: `Basic ${TOKEN}` } },
        want: { status: 401, challenge: 'Bearer realm="records"' },
      },
    ],
    [
      'a wrong token',
      {
        given: { method: 'GET', path: '/api/posts/', headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}x` } },
        want: { status: 401, challenge: 'Bearer realm="records", error="invalid_token"' },
      },
    ],
    [
      'a token of another length',
      {
        given: { method: 'GET', path: '/api/posts/', headers: { authorization: `Bearer ${TOKEN}0` } },
        want: { status: 401, challenge: 'Bearer realm="records", error="invalid_token"' },
      },
    ],
    [
      'a valid token',
      { given: { method: 'GET', path: '/api/posts/', headers: { authorization: `Bearer ${TOKEN}` } }, want: { status: 200 } },
    ],
    [
      'the other valid token, scheme in lower case',
      { given: { method: 'GET', path: '/api/books/', headers: { authorization: `bearer ${OTHER}` } }, want: { status: 200 } },
    ],
    [
      'a create without a token',
      { given: { method: 'POST', path: '/api/posts/' }, want: { status: 401, challenge: 'Bearer realm="records"' } },
    ],
    [
      'an unknown /api/ path without a token',
      { given: { method: 'GET', path: '/api/secrets/' }, want: { status: 401, challenge: 'Bearer realm="records"' } },
    ],
    [
      'an unknown /api/ path with a token',
      { given: { method: 'GET', path: '/api/secrets/', headers: { authorization: `Bearer ${TOKEN}` } }, want: { status: 404 } },
    ],
    ['/healthz stays open', { given: { method: 'GET', path: '/healthz' }, want: { status: 200 } }],
    ['/readyz stays open', { given: { method: 'GET', path: '/readyz' }, want: { status: 200 } }],
    ['/openapi.json stays open', { given: { method: 'GET', path: '/openapi.json' }, want: { status: 200 } }],
    ['/openapi.yaml stays open', { given: { method: 'GET', path: '/openapi.yaml' }, want: { status: 200 } }],
    ['/docs stays open', { given: { method: 'GET', path: '/docs' }, want: { status: 200 } }],
    ['/metrics stays open', { given: { method: 'GET', path: '/metrics' }, want: { status: 200 } }],
  ])('%s', async (_name, { given, want }) => {
    const res = await app.request(given.method, given.path, { headers: given.headers, body: given.method === 'POST' ? post : undefined });
    expect(res.status).toBe(want.status);
    expect(res.headers.get('www-authenticate')).toBe(want.challenge ?? null);
    if (want.status === 401) {
      expect(res.body).toMatchObject({
        type: want.challenge?.includes('invalid_token') ? '/problems/token-invalid' : '/problems/token-missing',
        status: 401,
        request_id: res.headers.get('x-request-id'),
      });
    }
  });

  test('a request without a token changes nothing', async () => {
    const before = await app.request('GET', '/api/posts/', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect((await app.request('POST', '/api/posts/', { body: post, headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
    const after = await app.request('GET', '/api/posts/', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(after.body.count).toBe(before.body.count);
  });

  test('the token is checked before the body is read: a huge body without a token is 401, not 413', async () => {
    const res = await app.request('POST', '/api/posts/', { raw: 'x'.repeat(2 * 1024 * 1024) });
    expect(res.status).toBe(401);
  });
});

describe('the spec declares it', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  // A token is optional in the contract (`{}` beside bearerAuth: a deployment may run open); the
  // first describe shows that a deployment with tokens still requires one on every /api/ request.
  test('the bearer scheme, optional on every /api/ operation with 401, 403 and 429, and the service operations open', async () => {
    const spec = (await app.request('GET', '/openapi.json')).body;
    expect(spec.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const seen: Record<string, unknown>[] = [];
    for (const [path, item] of Object.entries<Record<string, any>>(spec.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (!op.operationId) continue;
        const api = path.startsWith('/api/');
        seen.push({
          operation: `${method} ${path}`,
          security: op.security ?? spec.security,
          responses: ['401', '403', '429'].filter((code) => code in op.responses),
        });
        expect(seen.at(-1)).toEqual({
          operation: `${method} ${path}`,
          security: api ? [{}, { bearerAuth: [] }] : [],
          responses: api ? ['401', '403', '429'] : [],
        });
      }
    }
    expect(seen.length).toBe(74);
  });
});

describe('without API_TOKENS the API is open', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  test.each([
    ['no Authorization', { given: {}, want: 201 }],
    ['any Authorization is ignored', { given: { authorization: 'Bearer whatever' }, want: 201 }],
  ])('%s', async (_name, { given, want }) => {
    const res = await app.request('POST', '/api/posts/', { body: post, headers: given });
    expect(res.status).toBe(want);
    expect(res.body).toMatchObject(post);
  });
});

// The same limit whichever store counts: this process's memory, or Redis (REDIS_URL), under a
// key prefix of this test's own.
describe.each([
  ['counted in the process', { redis: false }],
  ['counted in Redis', { redis: true }],
])('rate limit (RATE_LIMIT_PER_MINUTE), %s', (_name, { redis }) => {
  const prefix = uniquePrefix('access');
  let app: TestApp;
  let counts: RedisCounts | undefined;
  let client: Awaited<ReturnType<typeof connectTestRedis>> | undefined;
  beforeAll(async () => {
    if (redis) {
      client = await connectTestRedis();
      counts = connectRedisCounts({ url: REDIS_URL, where: REDIS_URL }, silentLogger);
      await counts.ready;
    }
    app = await startTestApp({ rateLimitPerMinute: 3, rateLimitStore: counts?.store(prefix) });
  });
  afterAll(async () => {
    await app?.close();
    await counts?.close();
    if (client) {
      await deleteKeys(client, prefix);
      client.destroy();
    }
  });

  test('the fourth /api/ request in a minute is 429 with Retry-After and RateLimit headers', async () => {
    const statuses: number[] = [];
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await app.request('GET', '/api/tasks/');
      statuses.push(res.status);
      remaining.push(res.headers.get('ratelimit'));
      if (res.status === 429) {
        expect(res.body).toMatchObject({
          type: '/problems/rate-limited',
          title: 'Rate limited',
          status: 429,
          detail: expect.stringMatching(/^Too many requests; try again in \d+ seconds$/),
        });
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(60);
        expect(res.headers.get('ratelimit-policy')).toMatch(/^"per-minute"; q=3; w=60; pk=:[A-Za-z0-9+/=]+:$/);
      }
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(remaining.map((r) => r?.match(/r=(\d+)/)?.[1])).toEqual(['2', '1', '0', '0']);
  });

  test('a limited request changes nothing, and other paths are not limited', async () => {
    expect((await app.request('POST', '/api/tasks/', { body: { title: 'over the limit' } })).status).toBe(429);
    for (let i = 0; i < 5; i++) expect((await app.request('GET', '/healthz')).status).toBe(200);
    expect(app.logs.filter((l) => l.operationId === 'createTask').map((l) => l.status)).toEqual([429]);
    if (client) expect(Number(await client.get(`${prefix}127.0.0.1`))).toBe(5);
  });
});

// Redis away: refused connections, or a server that takes the connection and never answers.
describe.each<[string, { silent: boolean; error: RegExp }]>([
  ['a Redis that nothing listens for', { silent: false, error: /ECONNREFUSED/ }],
  ['a Redis that accepts connections and never answers', { silent: true, error: /offline|timeout/i }],
])('rate limit counted in %s', (_name, { silent, error }) => {
  const lines: Record<string, any>[] = [];
  const sockets = new Set<Socket>();
  const mute = createServer((socket) => void sockets.add(socket.on('error', () => undefined)));
  let app: TestApp;
  let counts: RedisCounts;
  beforeAll(async () => {
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    let port = await freePort();
    if (silent) {
      await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
      port = (mute.address() as AddressInfo).port;
    }
    const url = `redis://127.0.0.1:${port}`;
    counts = connectRedisCounts({ url, where: url }, logger);
    await counts.ready;
    app = await startTestApp({ rateLimitPerMinute: 2, rateLimitStore: counts.store(uniquePrefix('access-down')) });
  });
  afterAll(async () => {
    await app?.close();
    await counts?.close();
    for (const socket of sockets) socket.destroy();
    if (silent) await new Promise((resolve) => mute.close(resolve));
  });

  test('requests past the quota are answered, uncounted (no RateLimit headers); one warning, no error', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await app.request('GET', '/api/tasks/');
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit')).toBeNull();
    }
    expect(lines.filter((l) => l.level === 'warn')).toEqual([
      expect.objectContaining({
        msg: expect.stringMatching(/^rate limit: Redis cannot count requests/),
        error: expect.stringMatching(error),
      }),
    ]);
    expect([...lines, ...app.logs].filter((l) => l.level === 'error')).toEqual([]);
  });
});

// A Redis that stops answering once connected (a stopped process, a lost host): the count's
// command is written and never answered. A proxy that holds what it would pass on plays it, and
// hands it all over in order when it thaws, as the stopped process would answer.
describe('rate limit counted in a Redis that stops answering after it connected', () => {
  const lines: Record<string, any>[] = [];
  let frozen = false;
  const held: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const relay = (from: Socket, to: Socket) =>
    from.on('data', (chunk) => (frozen ? held.push(() => to.write(chunk)) : to.write(chunk))).on('error', () => undefined);
  const proxy = createServer((client) => {
    const { hostname, port } = new URL(REDIS_URL);
    const upstream = connect(Number(port || 6379), hostname);
    for (const s of [client, upstream]) sockets.add(s);
    relay(client, upstream);
    relay(upstream, client);
  });
  let app: TestApp;
  let counts: RedisCounts;
  const prefix = uniquePrefix('access-hung');
  beforeAll(async () => {
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = `redis://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    counts = connectRedisCounts({ url, where: url }, createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) }));
    await counts.ready;
    app = await startTestApp({ rateLimitPerMinute: 100, rateLimitStore: counts.store(prefix) });
  });
  afterAll(async () => {
    await app?.close();
    await counts?.close();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => proxy.close(resolve));
    const client = await connectTestRedis();
    await deleteKeys(client, prefix);
    client.destroy();
  });

  test('requests are answered uncounted while it is silent, with one warning, and counted once it answers again', async () => {
    const remaining = async () => {
      const res = await app.request('GET', '/api/tasks/');
      expect(res.status).toBe(200);
      return res.headers.get('ratelimit')?.match(/r=(\d+)/)?.[1] ?? null;
    };
    expect(await remaining()).toBe('99');
    frozen = true;
    // The first waits for the count's timeout; the next pass without asking for a while.
    for (let i = 0; i < 3; i++) expect(await remaining()).toBeNull();
    expect(lines.filter((l) => l.level === 'warn')).toEqual([
      expect.objectContaining({
        msg: expect.stringMatching(/^rate limit: Redis cannot count requests/),
        error: expect.stringMatching(/no answer/),
      }),
    ]);
    frozen = false;
    for (const write of held.splice(0)) write();
    // The held count is answered late (and dropped); once the pause is over, counts go on.
    await new Promise((resolve) => setTimeout(resolve, 5500));
    // Counted again: the held count and this one (99 left before the pause).
    expect(await remaining()).toBe('97');
    expect(lines.filter((l) => l.level === 'info' && /counts requests again/.test(l.msg))).toHaveLength(1);
  }, 30_000);
});

describe('CORS (CORS_ORIGINS)', () => {
  const ALLOWED = 'https://app.example.com';
  let app: TestApp;
  let closed: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ corsOrigins: [ALLOWED] });
    closed = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
    await closed.close();
  });

  test.each<[string, { given: { origin: string; on?: 'closed' }; want: string | null }]>([
    ['an allowed origin', { given: { origin: ALLOWED }, want: ALLOWED }],
    ['another origin', { given: { origin: 'https://evil.example' }, want: null }],
    ['any origin when CORS_ORIGINS is not set', { given: { origin: ALLOWED, on: 'closed' }, want: null }],
  ])('a request from %s', async (_name, { given, want }) => {
    const res = await (given.on === 'closed' ? closed : app).request('GET', '/api/posts/', { headers: { origin: given.origin } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(want);
    if (want) expect(res.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
  });

  test.each<[string, { given: Record<string, string>; want: { status: number; allowOrigin: string | null } }]>([
    [
      'a preflight from an allowed origin',
      {
        given: {
          origin: ALLOWED,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
        want: { status: 204, allowOrigin: ALLOWED },
      },
    ],
    [
      'a preflight from another origin',
      { given: { origin: 'https://evil.example', 'access-control-request-method': 'POST' }, want: { status: 405, allowOrigin: null } },
    ],
    ['an OPTIONS request that is no preflight', { given: { origin: ALLOWED }, want: { status: 405, allowOrigin: null } }],
  ])('%s', async (_name, { given, want }) => {
    const res = await app.request('OPTIONS', '/api/posts/', { headers: given });
    expect(res.status).toBe(want.status);
    expect(res.headers.get('access-control-allow-origin')).toBe(want.allowOrigin);
    if (want.status === 204) {
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(res.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    } else {
      expect(res.body).toMatchObject({ status: 405 });
    }
  });

  // Read from the spec's components here, apart from the app's walk over its operations: a page
  // on another origin can send a conditional or idempotent write and read the ETag it needs.
  const spec = loadSpec();
  const sent = Object.values(spec.components?.parameters ?? {})
    .map((p) => p as { in: string; name: string })
    .filter((p) => p.in === 'header')
    .map((p) => p.name);
  const answered = Object.keys(spec.components?.headers ?? {});

  test.each(['Authorization', 'Content-Type', ...sent])('a preflight for a PATCH with %s is allowed', async (header) => {
    const res = await app.request('OPTIONS', '/api/posts/1/', {
      headers: { origin: ALLOWED, 'access-control-request-method': 'PATCH', 'access-control-request-headers': header.toLowerCase() },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-methods')?.split(',')).toContain('PATCH');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase().split(',')).toContain(header.toLowerCase());
  });

  test.each(answered)('a page may read the %s header of an answer', async (header) => {
    const res = await app.request('GET', '/api/posts/', { headers: { origin: ALLOWED } });
    expect(res.headers.get('access-control-expose-headers')?.split(',')).toContain(header);
  });
});

describe('security headers and the body limit', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ bodyLimit: 1024 });
  });
  afterAll(() => app.close());

  test.each<[string, { given: { method: string; path: string; raw?: string }; want: { status: number; csp: RegExp } }]>([
    [
      'a record list',
      { given: { method: 'GET', path: '/api/posts/' }, want: { status: 200, csp: /^default-src 'none';frame-ancestors 'none'/ } },
    ],
    ['an unknown path', { given: { method: 'GET', path: '/nowhere' }, want: { status: 404, csp: /^default-src 'none'/ } }],
    [
      'a body over the limit',
      {
        given: { method: 'POST', path: '/api/posts/', raw: JSON.stringify({ ...post, content: 'x'.repeat(2000) }) },
        want: { status: 413, csp: /^default-src 'none'/ },
      },
    ],
    [
      'the docs page, whose scripts run',
      { given: { method: 'GET', path: '/docs' }, want: { status: 200, csp: /^default-src 'self';script-src 'self' 'unsafe-inline'/ } },
    ],
    ['the metrics', { given: { method: 'GET', path: '/metrics' }, want: { status: 200, csp: /^default-src 'none'/ } }],
  ])('%s', async (_name, { given, want }) => {
    const res = await app.request(given.method, given.path, { raw: given.raw });
    expect(res.status).toBe(want.status);
    expect(res.headers.get('content-security-policy')).toMatch(want.csp);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(res.headers.get('strict-transport-security')).toMatch(/^max-age=\d+/);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-powered-by')).toBeNull();
    if (want.status === 413) {
      expect(res.body).toMatchObject({ type: '/problems/body-too-large', detail: 'The request body is larger than 1024 bytes' });
      expect((await app.request('GET', '/api/posts/')).body.count).toBe(0);
    }
  });
});

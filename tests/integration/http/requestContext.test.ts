import { startTestApp, type TestApp } from '../../helpers/app';

// One JSON log line per request, and the request id: kept when sane, made otherwise, echoed on
// every response and quoted in every error body.
const TOKEN = 'tok_logging_test_0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ apiTokens: [TOKEN] });
});
afterAll(() => app.close());

const linesFor = (id: string) => app.logs.filter((l) => l.requestId === id);

describe('X-Request-Id', () => {
  test.each<[string, { given: string | undefined; want: 'kept' | 'made' }]>([
    ['a sane id is kept', { given: 'req-42.a_b:c', want: 'kept' }],
    ['a uuid is kept', { given: '0b6f4bd6-6a4c-4c41-9d8a-6a1f0f0f2a11', want: 'kept' }],
    ['128 characters are kept', { given: 'a'.repeat(128), want: 'kept' }],
    ['none: one is made', { given: undefined, want: 'made' }],
    ['129 characters: replaced', { given: 'a'.repeat(129), want: 'made' }],
    ['spaces: replaced', { given: 'two words', want: 'made' }],
    ['quotes and braces: replaced', { given: '"},{"level":"fatal', want: 'made' }],
    ['non-ASCII: replaced', { given: 'caf\u00e9', want: 'made' }],
  ])('%s', async (_name, { given, want }) => {
    const headers: Record<string, string> = { ...auth };
    if (given !== undefined) headers['x-request-id'] = given;
    const res = await app.request('GET', '/api/posts/', { headers });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id')!;
    if (want === 'kept') expect(id).toBe(given);
    else expect(id).toMatch(UUID);
    expect(linesFor(id)).toHaveLength(1);
  });

  test.each<[string, { given: { method: string; path: string; body?: unknown; headers?: Record<string, string> }; want: number }]>([
    ['400', { given: { method: 'POST', path: '/api/posts/', body: { title: '' }, headers: auth }, want: 400 }],
    ['401', { given: { method: 'GET', path: '/api/posts/' }, want: 401 }],
    ['404', { given: { method: 'GET', path: '/api/posts/999999/', headers: auth }, want: 404 }],
    ['405', { given: { method: 'DELETE', path: '/api/posts/', headers: auth }, want: 405 }],
    ['415', { given: { method: 'POST', path: '/api/posts/', headers: { ...auth, 'content-type': 'text/plain' } }, want: 415 }],
  ])('a %s body carries the request id', async (_name, { given, want }) => {
    const id = `quote-me-${want}`;
    const res = await app.request(given.method, given.path, {
      body: given.body,
      raw: given.body ? undefined : given.method === 'POST' ? 'x' : undefined,
      headers: { ...given.headers, 'x-request-id': id },
    });
    expect(res.status).toBe(want);
    expect(res.headers.get('x-request-id')).toBe(id);
    expect(res.body).toMatchObject({ status: want, request_id: id });
  });
});

describe('the request log', () => {
  test('one line per request, with time, method, path, operationId, status, duration, request id and token name', async () => {
    const created = await app.request('POST', '/api/posts/?page=1', {
      body: { title: 't', content: 'c', author: 'a' },
      headers: { ...auth, 'x-request-id': 'log-line-1' },
    });
    expect(created.status).toBe(201);
    expect(linesFor('log-line-1')).toEqual([
      {
        level: 'info',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        pid: process.pid,
        hostname: expect.any(String),
        method: 'POST',
        path: '/api/posts/',
        operationId: 'createPost',
        status: 201,
        durationMs: expect.any(Number),
        requestId: 'log-line-1',
        tokenName: 'api-token-1',
        msg: 'request',
      },
    ]);
  });

  test('a path that no operation has is logged without an operationId', async () => {
    await app.request('GET', '/nowhere', { headers: { 'x-request-id': 'log-line-2' } });
    expect(linesFor('log-line-2')).toEqual([expect.objectContaining({ path: '/nowhere', status: 404 })]);
    expect(linesFor('log-line-2')[0]).not.toHaveProperty('operationId');
  });

  test('nothing secret: no token, no body, no query string', async () => {
    const secret = 'zqxjkvbnmw';
    const wrongToken = 'tok_wrong_but_secret_0123456789ab';
    await app.request('POST', `/api/posts/?search=${secret}`, { body: { title: secret, content: secret, author: secret }, headers: auth });
    await app.request('POST', '/api/posts/', { body: { title: secret.repeat(20), content: secret, author: secret }, headers: auth });
    await app.request('PATCH', '/api/posts/1/', { raw: `{"title": "${secret}"`, headers: auth });
    await app.request('GET', `/api/posts/?search=${secret}`, { headers: { authorization: `Bearer ${wrongToken}` } });
    const text = JSON.stringify(app.logs);
    expect(app.logs.length).toBeGreaterThan(4);
    for (const s of [TOKEN, wrongToken, secret, 'authorization', 'Bearer']) expect(text).not.toContain(s);
  });
});

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
    // A token that only writes gets no record back: the id is in Location.
    expect(made.status).toBe(204);
    const id = Number(/\/(\d+)\/$/.exec(made.headers.get('location') ?? '')?.[1]);
    const path = op.path.replace('{id}', String(id));
    if (op.operationId.startsWith('bulkDelete')) return { path, body: { ids: [id] } };
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

// ADR 0012: a loader that only writes cannot read what others wrote. Its writes answer 204 with
// the ETag (and Location) alone; it may learn which ids exist, never what they hold.
describe('a token that only writes', () => {
  let app: TestApp;
  let writer: Record<string, string>;
  let reader: Record<string, string>;
  beforeAll(async () => {
    const w = newToken('loader', ['*:write']);
    const r = newToken('reporting', ['*:read']);
    app = await startTestApp({ tokensFile: { version: 1, tokens: [w.entry, r.entry] } });
    writer = { authorization: `Bearer ${w.token}` };
    reader = { authorization: `Bearer ${r.token}` };
  });
  afterAll(() => app.close());

  const idFrom = (location: string | null) => Number(/\/(\d+)\/$/.exec(location ?? '')?.[1]);

  test.each(Object.keys(byName))('%s: never receives a record, from any write', async (c) => {
    const fixture = byName[c];
    const created = await app.request('POST', `/api/${c}/`, { body: fixture.valid(8101), headers: writer });
    expect([created.status, created.body, created.headers.get('etag')]).toEqual([204, '', '"1"']);
    const id = idFrom(created.headers.get('location'));
    const stored = await app.request('GET', `/api/${c}/${id}/`, { headers: reader });
    expect(stored.body).toMatchObject(fixture.valid(8101));

    const replaced = await app.request('PUT', `/api/${c}/${id}/`, { body: fixture.valid(8102), headers: writer });
    expect([replaced.status, replaced.body, replaced.headers.get('etag')]).toEqual([204, '', '"2"']);
    const patched = await app.request('PATCH', `/api/${c}/${id}/`, { body: fixture.patch, headers: writer });
    expect([patched.status, patched.body, patched.headers.get('etag')]).toEqual([204, '', '"3"']);
    // An empty patch is no write at all: the version and updated_at stay.
    const before = await app.request('GET', `/api/${c}/${id}/`, { headers: reader });
    const empty = await app.request('PATCH', `/api/${c}/${id}/`, { body: {}, headers: writer });
    expect([empty.status, empty.body, empty.headers.get('etag')]).toEqual([204, '', '"3"']);
    const after = await app.request('GET', `/api/${c}/${id}/`, { headers: reader });
    expect(after.body).toEqual(before.body);

    const bulk = await app.request('POST', `/api/${c}/bulk/`, { body: [fixture.valid(8103)], headers: writer });
    expect([bulk.status, bulk.body]).toEqual([204, '']);
    const key = { ...writer, 'idempotency-key': `only-writes-${c}` };
    const first = await app.request('POST', `/api/${c}/`, { body: fixture.valid(8104), headers: key });
    const replay = await app.request('POST', `/api/${c}/`, { body: fixture.valid(8104), headers: key });
    expect([replay.status, replay.body, replay.headers.get('idempotent-replayed')]).toEqual([204, '', 'true']);
    expect(replay.headers.get('location')).toBe(first.headers.get('location'));
  });

  test('learns whether an id exists, as any write does, but not what it holds', async () => {
    const created = await app.request('POST', '/api/users/', { body: byName.users.valid(8201), headers: writer });
    const id = idFrom(created.headers.get('location'));
    const guard = { ...writer, 'if-none-match': '*' };
    const taken = await app.request('PUT', `/api/users/${id}/`, { body: byName.users.valid(8202), headers: guard });
    const free = await app.request('PUT', `/api/users/${id + 1000}/`, { body: byName.users.valid(8202), headers: guard });
    expect([taken.status, free.status]).toEqual([412, 404]);
    expect(JSON.stringify(taken.body)).not.toContain(String(byName.users.valid(8201).email));
  });

  test('a token that reads too gets the record, unless it prefers return=minimal', async () => {
    const both = newToken('both', ['posts:*']);
    const withBoth = await startTestApp({ tokensFile: { version: 1, tokens: [both.entry] } });
    try {
      const headers = { authorization: `Bearer ${both.token}` };
      const full = await withBoth.request('POST', '/api/posts/', { body: byName.posts.valid(8301), headers });
      expect(full.status).toBe(201);
      expect(full.body).toMatchObject(byName.posts.valid(8301));
      const minimal = await withBoth.request('POST', '/api/posts/', {
        body: byName.posts.valid(8302),
        headers: { ...headers, prefer: 'return=minimal' },
      });
      expect([minimal.status, minimal.body, minimal.headers.get('preference-applied')]).toEqual([204, '', 'return=minimal']);
    } finally {
      await withBoth.close();
    }
  });
});

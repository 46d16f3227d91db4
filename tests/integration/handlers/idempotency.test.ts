import { migrate, migrationSource } from '../../../src/schema';
import { createHash, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../../src/app';
import { newToken, type TokensFile } from '../../../src/auth/tokensFile';
import { type Db, openDb } from '../../../src/db/connection';
import { claimKey, OPEN_CALLER } from '../../../src/db/idempotency';
import { dbTimestamp } from '../../../src/db/time';
import { PROBLEM_TYPES } from '../../../src/problems';
import { requester, type Requester, startTestApp, type TestApp, type TestResponse } from '../../helpers/app';
import { assertMatchesContract } from '../../helpers/contract';
import { createTestDatabase, dialect, dropTestDatabase, pausingAfter, type TestDatabase } from '../../helpers/db';
import { byName, fixtures, type Fixture } from '../../helpers/fixtures';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const HOUR = 60 * 60 * 1000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Waits until `done()` holds, or `ms` have passed. */
async function until(done: () => boolean, ms: number): Promise<void> {
  for (const end = Date.now() + ms; !done() && Date.now() < end;) await sleep(10);
}

let serial = 0;
const next = () => ++serial;
/** A key no other test uses, so tests never see each other's stored responses. */
const freshKey = (label: string) => `${label}-${randomBytes(6).toString('hex')}`;

function post(f: Fixture, body: unknown, key?: string, on: TestApp = app): Promise<TestResponse> {
  return on.request('POST', `/api/${f.name}/`, { body, headers: key === undefined ? {} : { 'idempotency-key': key } });
}

/** How many records the collection holds, as the API counts them. */
async function count(f: Fixture): Promise<number> {
  const res = await app.request('GET', `/api/${f.name}/?page_size=1`);
  expect(res.status).toBe(200);
  return res.body.count;
}

/** The request hash the service keys on: SHA-256 of the body as JSON with sorted keys. */
function bodyHash(value: unknown): string {
  const canonical = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
    if (v && typeof v === 'object') {
      return `{${Object.keys(v)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
        .join(',')}}`;
    }
    return JSON.stringify(v);
  };
  return createHash('sha256').update(canonical(value)).digest('hex');
}

function expectFirst(res: TestResponse, f: Fixture): void {
  expect(res.status).toBe(201);
  expect(res.headers.get('idempotent-replayed')).toBeNull();
  expect(res.headers.get('location')).toBe(`/api/${f.name}/${res.body.id}/`);
  expect(res.headers.get('etag')).toMatch(/^"[0-9]+"$/);
}

/** A replay: the first response again, status, body, Location and ETag, marked as replayed. */
function expectReplayOf(res: TestResponse, first: TestResponse): void {
  expect(res.status).toBe(first.status);
  expect(res.body).toEqual(first.body);
  expect(res.headers.get('location')).toBe(first.headers.get('location'));
  expect(res.headers.get('etag')).toBe(first.headers.get('etag'));
  expect(res.headers.get('idempotent-replayed')).toBe('true');
}

/** The 409 of a twin whose first request is still running: retry after a second, it is done by then. */
function expectStillRunning(res: TestResponse): void {
  expectKeyProblem(res, 'idempotency-in-flight');
  expect(res.body.detail).toBe('A request with this Idempotency-Key is still running; retry later');
  expect(res.headers.get('retry-after')).toBe('1');
  expect(res.headers.get('idempotent-replayed')).toBeNull();
}

function expectKeyProblem(res: TestResponse, kind: 'idempotency-in-flight' | 'idempotency-mismatch' | 'validation'): void {
  const { status, title } = PROBLEM_TYPES[kind];
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: `/problems/${kind}`, title, status, detail: expect.any(String) });
  // Header names are case-insensitive; the entry must name this header and nothing else.
  expect(res.body.errors.map((e: { field: string }) => e.field.toLowerCase())).toEqual(res.body.errors.map(() => 'idempotency-key'));
  expect(res.body.errors.length).toBeGreaterThan(0);
}

/** The body with its keys in the reverse order: the same JSON object, spelled differently. */
function reversed(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).reverse());
}

describe.each(fixtures.map((f) => [f.name, f] as const))('%s', (name, f) => {
  test('a retry with the same key and body replays the first response and creates nothing', async () => {
    const key = freshKey('retry');
    const body = f.valid(next());
    const before = await count(f);
    const first = await post(f, body, key);
    expectFirst(first, f);
    expect(first.body).toMatchObject(body);

    for (let i = 0; i < 2; i++) expectReplayOf(await post(f, body, key), first);
    expect(await count(f)).toBe(before + 1);

    // The first response, not the record's current state: the replay tells the client what its
    // own request did.
    const patched = await app.request('PATCH', `/api/${name}/${first.body.id}/`, { body: f.patch });
    expect(patched.status).toBe(200);
    expectReplayOf(await post(f, body, key), first);
    expect(await count(f)).toBe(before + 1);
  });

  const sameBody: [string, { given: (b: Record<string, unknown>) => { body?: unknown; raw?: string } }][] = [
    ['keys in another order', { given: (b) => ({ body: reversed(b) }) }],
    ['other white space in the JSON', { given: (b) => ({ raw: JSON.stringify(b, null, 2).replace(/:/g, ' : ') + '\n' }) }],
  ];
  test.each(sameBody)('the same body with %s is a replay', async (_n, { given }) => {
    const key = freshKey('same');
    const body = f.valid(next());
    const first = await post(f, body, key);
    expectFirst(first, f);
    const before = await count(f);
    const res = await app.request('POST', `/api/${name}/`, { ...given(body), headers: { 'idempotency-key': key } });
    expectReplayOf(res, first);
    expect(await count(f)).toBe(before);
  });

  const otherBody: [string, { given: (b: Record<string, unknown>) => Record<string, unknown> }][] = [
    ['another record entirely', { given: () => f.valid(next()) }],
    ['one value changed', { given: (b) => ({ ...b, [Object.keys(b)[0]]: `${String(b[Object.keys(b)[0]])}x` }) }],
    ['an optional field added', { given: (b) => ({ ...b, ...f.patch }) }],
  ];
  test.each(otherBody)('the same key with a different body (%s) is 422 naming Idempotency-Key, nothing created', async (_n, { given }) => {
    const key = freshKey('other');
    const body = f.valid(next());
    const first = await post(f, body, key);
    expectFirst(first, f);
    const before = await count(f);
    const res = await post(f, given(body), key);
    expectKeyProblem(res, 'idempotency-mismatch');
    expect(res.headers.get('location')).toBeNull();
    expect(await count(f)).toBe(before);
    // The key still belongs to the first body.
    expectReplayOf(await post(f, body, key), first);
  });

  test('without a key, the same body twice creates two records (what the key prevents)', async () => {
    if (f.uniqueFields.length) return; // a second create would be a uniqueness 409 instead
    const body = f.valid(next());
    const before = await count(f);
    const a = await post(f, body);
    const b = await post(f, body);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.id).not.toBe(b.body.id);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(await count(f)).toBe(before + 2);
  });

  // Node's fetch refuses control characters and DEL in a header and trims outer white space, so
  // the bad keys below are the ones it sends as they are.
  const badKeys: [string, { given: string }][] = [
    ['empty', { given: '' }],
    ['256 characters', { given: 'k'.repeat(256) }],
    ['with a tab', { given: 'a\tb' }],
    ['with a non-ASCII letter', { given: 'schlüssel' }],
    ['with a no-break space', { given: 'a\u00a0b' }],
  ];
  test.each(badKeys)('a key %s is 400 naming the header, nothing created', async (_n, { given }) => {
    const before = await count(f);
    const res = await post(f, f.valid(next()), given);
    expectKeyProblem(res, 'validation');
    expect(await count(f)).toBe(before);
  });

  const goodKeys: [string, { given: string }][] = [
    ['of 1 character', { given: 'k' }],
    ['of 255 characters', { given: `${randomBytes(4).toString('hex')}${'k'.repeat(247)}` }],
    ['with spaces and punctuation inside', { given: `a key ~!@#$%^&*()[]{}"'<>?/\\|=+;:,. ${randomBytes(4).toString('hex')}` }],
  ];
  test.each(goodKeys)('a key %s is accepted and replays', async (_n, { given }) => {
    // `k` alone is shared by the five collections: keys are per collection, so that is fine.
    const body = f.valid(next());
    const first = await post(f, body, given);
    expectFirst(first, f);
    expectReplayOf(await post(f, body, given), first);
  });

  test('the same key while the first request is still running is 409, nothing created', async () => {
    const key = freshKey('running');
    const body = f.valid(next());
    // A request that claimed the key and has not finished (the claim is what a running create holds,
    // and all that another process running it shows).
    expect(await claimKey(app.database.db, { collection: name, caller: OPEN_CALLER, key }, bodyHash(body))).toEqual({ kind: 'claimed' });
    const before = await count(f);
    const res = await post(f, body, key);
    expectStillRunning(res);
    expect(await count(f)).toBe(before);
    // Still running for a retry too: the claim was neither taken over nor dropped.
    expectKeyProblem(await post(f, body, key), 'idempotency-in-flight');
    expect(await count(f)).toBe(before);
  });

  test('a key older than 24 hours is forgotten: the POST runs again', async () => {
    const key = freshKey('expired');
    const body = f.valid(next());
    const first = await post(f, body, key);
    expectFirst(first, f);
    const keys = () => app.database.db('idempotency_keys').where({ collection: name, idem_key: key });

    // 23 hours on, the key still holds.
    expect(await keys().update({ created_at: dbTimestamp(Date.now() - 23 * HOUR) })).toBe(1);
    expectReplayOf(await post(f, body, key), first);
    expectKeyProblem(await post(f, f.valid(next()), key), 'idempotency-mismatch');

    // 25 hours on, it is gone: a different body is no longer a 422 but a new create...
    expect(await keys().update({ created_at: dbTimestamp(Date.now() - 25 * HOUR) })).toBe(1);
    const before = await count(f);
    const other = f.valid(next());
    const again = await post(f, other, key);
    expectFirst(again, f);
    expect(again.body).toMatchObject(other);
    expect(again.body.id).not.toBe(first.body.id);
    expect(await count(f)).toBe(before + 1);
    // ...which the key now stands for.
    expectReplayOf(await post(f, other, key), again);
  });

  test('an expired key with the same body creates again (or meets the uniqueness rule), never replays', async () => {
    const key = freshKey('expired-same');
    const body = f.valid(next());
    const first = await post(f, body, key);
    expectFirst(first, f);
    await app.database
      .db('idempotency_keys')
      .where({ collection: name, idem_key: key })
      .update({ created_at: dbTimestamp(Date.now() - 25 * HOUR) });
    const before = await count(f);
    const res = await post(f, body, key);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    if (f.uniqueFields.length) {
      expect(res.status).toBe(409);
      expect(res.body.errors.length).toBeGreaterThan(0);
      for (const e of res.body.errors) expect(f.uniqueFields).toContain(e.field);
      expect(await count(f)).toBe(before);
    } else {
      expectFirst(res, f);
      expect(res.body.id).not.toBe(first.body.id);
      expect(await count(f)).toBe(before + 1);
    }
  });

  test(`20 parallel POSTs with one key create exactly one record (${dialect})`, async () => {
    const key = freshKey('parallel');
    const body = f.valid(next());
    const before = await count(f);
    const results = await Promise.all(Array.from({ length: 20 }, () => post(f, body, key)));
    const created = results.filter((r) => r.status === 201);
    const running = results.filter((r) => r.status === 409);
    const after = await count(f);
    // The issue's closing note reports these numbers.
    console.log(
      `[${dialect}] ${name}: 20 parallel POST with one Idempotency-Key -> ${created.length} x 201 (${created.filter((r) => r.headers.get('idempotent-replayed')).length} replayed), ${running.length} x 409, other: ${results.length - created.length - running.length}; records created: ${after - before}`,
    );

    expect(after - before).toBe(1);
    expect(created.length + running.length).toBe(20);
    expect(created.length).toBeGreaterThan(0);
    // One response did the create; every other 201 is its replay.
    const original = created.filter((r) => r.headers.get('idempotent-replayed') === null);
    expect(original).toHaveLength(1);
    expectFirst(original[0], f);
    for (const r of created) if (r !== original[0]) expectReplayOf(r, original[0]);
    for (const r of running) expectKeyProblem(r, 'idempotency-in-flight');
    // Settled: a retry now replays.
    expectReplayOf(await post(f, body, key), original[0]);
  });
});

test('keys are per collection: one key creates one record in each collection', async () => {
  const key = freshKey('shared');
  const bodies = fixtures.map((f) => f.valid(next()));
  const firsts: TestResponse[] = [];
  for (const [i, f] of fixtures.entries()) {
    const before = await count(f);
    const res = await post(f, bodies[i], key);
    expectFirst(res, f);
    expect(await count(f)).toBe(before + 1);
    firsts.push(res);
  }
  // Each collection replays its own record under the shared key.
  for (const [i, f] of fixtures.entries()) expectReplayOf(await post(f, bodies[i], key), firsts[i]);
});

describe('a create that fails gives the key up, so a retry runs it again', () => {
  const rows: [string, { f: Fixture; clash: (b: Record<string, unknown>) => Record<string, unknown>; field: string }][] = [
    ['books, a taken isbn', { f: byName.books, clash: (b) => ({ ...byName.books.valid(next()), isbn: b.isbn }), field: 'isbn' }],
    [
      'users, a taken username',
      { f: byName.users, clash: (b) => ({ ...byName.users.valid(next()), username: b.username }), field: 'username' },
    ],
    [
      'users, a taken email in another case',
      { f: byName.users, clash: (b) => ({ ...byName.users.valid(next()), email: String(b.email).toUpperCase() }), field: 'email' },
    ],
  ];
  test.each(rows)('%s', async (_n, { f, clash, field }) => {
    const holder = await post(f, f.valid(next()));
    expect(holder.status).toBe(201);
    const key = freshKey('failed');
    const body = clash(holder.body);

    // The conflict is answered as such each time, not stored and replayed, and not "still running".
    for (let i = 0; i < 2; i++) {
      const res = await post(f, body, key);
      expect(res.status).toBe(409);
      expect(res.headers.get('idempotent-replayed')).toBeNull();
      expect(res.body).toMatchObject({ type: '/problems/unique', status: 409, errors: [{ field, message: expect.any(String) }] });
    }

    // Once the clash is gone, the same body with the same key creates the record...
    expect((await app.request('DELETE', `/api/${f.name}/${holder.body.id}/`)).status).toBe(204);
    const before = await count(f);
    const created = await post(f, body, key);
    expectFirst(created, f);
    expect(created.body).toMatchObject(body);
    expect(await count(f)).toBe(before + 1);
    // ...and from then on replays it.
    expectReplayOf(await post(f, body, key), created);
  });
});

// Two instances of the service with tokens on one database: `held` can stop its next write to posts
// inside its transaction (the claim row committed, the record not yet), `other` is a pool of its own,
// as another process or host would have.
describe('keys per caller, and twins of a running request', () => {
  const posts = byName.posts;
  const file: TokensFile = { version: 1, tokens: [] };
  const tokens: Record<'alice' | 'bob', string> = { alice: '', bob: '' };
  for (const name of ['alice', 'bob'] as const) {
    const { entry, token } = newToken(name, ['*:read', '*:write']);
    file.tokens.push(entry);
    tokens[name] = token;
  }
  let database: TestDatabase;
  let otherDb: Db;
  const servers: Server[] = [];
  let held: Requester;
  let other: Requester;

  /** The next write to posts on `held` waits, inside its transaction, from `entered` to `release()`. */
  type Hold = { entered: Promise<void>; release: () => void };
  let armed: { enter: () => void; gate: Promise<void> } | undefined;
  function armHold(): Hold {
    let release!: () => void;
    let enter!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const entered = new Promise<void>((r) => (enter = r));
    armed = { enter, gate };
    return { entered, release };
  }

  async function serve(db: Db): Promise<Requester> {
    const express = await createApp({ db, bodyLimit: 1024 * 1024, fallbackHost: 'localhost', tokensFile: file });
    const server: Server = await new Promise((resolve) => {
      const s = express.listen(0, '127.0.0.1', () => resolve(s));
    });
    servers.push(server);
    return requester(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    const paused = pausingAfter(database.db, 'posts', async () => {
      const hold = armed;
      if (!hold) return;
      armed = undefined;
      hold.enter();
      // Released by the test; after 5 s regardless, so that a failing test ends.
      await Promise.race([hold.gate, sleep(5000)]);
    });
    held = await serve(paused.db);
    otherDb = openDb(database.config);
    other = await serve(otherDb);
  }, 180_000);
  afterAll(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
    await otherDb?.destroy();
    await database?.drop();
  });

  const as = (who: keyof typeof tokens, key: string) => ({ authorization: `Bearer ${tokens[who]}`, 'idempotency-key': key });
  const create = (on: Requester, who: keyof typeof tokens, body: unknown, key: string) =>
    on('POST', '/api/posts/', { body, headers: as(who, key) });
  const bulk = (on: Requester, who: keyof typeof tokens, body: unknown[], key: string) =>
    on('POST', '/api/posts/bulk/', { body, headers: as(who, key) });
  const stored = async () => {
    const res = await other('GET', '/api/posts/?page_size=1', { headers: { authorization: `Bearer ${tokens.alice}` } });
    expect(res.status).toBe(200);
    return res.body.count as number;
  };

  test('two callers with one key and one body each create their own record, and each replays its own', async () => {
    const key = freshKey('callers');
    const body = posts.valid(next());
    const before = await stored();
    const alice = await create(other, 'alice', body, key);
    expectFirst(alice, posts);
    const bob = await create(other, 'bob', body, key);
    expectFirst(bob, posts);
    expect(bob.body.id).not.toBe(alice.body.id);
    expect(await stored()).toBe(before + 2);
    expectReplayOf(await create(other, 'alice', body, key), alice);
    expectReplayOf(await create(other, 'bob', body, key), bob);
    expect(await stored()).toBe(before + 2);
  });

  test("another caller's key with another body is no 422: it is a key of its own", async () => {
    const key = freshKey('callers-other');
    const alice = await create(other, 'alice', posts.valid(next()), key);
    expectFirst(alice, posts);
    const body = posts.valid(next());
    const bob = await create(other, 'bob', body, key);
    expectFirst(bob, posts);
    expect(bob.body).toMatchObject(body);
  });

  test('bulk creates keep keys per caller too', async () => {
    const key = freshKey('callers-bulk');
    const body = [posts.valid(next()), posts.valid(next())];
    const before = await stored();
    const alice = await bulk(other, 'alice', body, key);
    const bob = await bulk(other, 'bob', body, key);
    expect([alice.status, bob.status]).toEqual([201, 201]);
    expect(bob.headers.get('idempotent-replayed')).toBeNull();
    expect(bob.body.results.map((r: { id: number }) => r.id)).not.toEqual(alice.body.results.map((r: { id: number }) => r.id));
    expect(await stored()).toBe(before + 4);
    const again = await bulk(other, 'bob', body, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(bob.body);
  });

  const sends: [string, { send: (on: Requester, body: Record<string, unknown>, key: string) => Promise<TestResponse> }][] = [
    ['creates', { send: (on, body, key) => create(on, 'alice', body, key) }],
    ['bulk creates', { send: (on, body, key) => bulk(on, 'alice', [body], key) }],
  ];
  test.each(sends)(
    `8 %s at once with one key: one 201, seven 409 with Retry-After; a later one replays (${dialect})`,
    async (_n, { send }) => {
      const key = freshKey('twins');
      const body = posts.valid(next());
      const before = await stored();
      const { entered, release } = armHold();
      const answered: TestResponse[] = [];
      const sent = Array.from({ length: 8 }, () => send(held, body, key).then((r) => (answered.push(r), r)));
      // The first to claim the key stays inside its write until the seven others are answered (or 3 s
      // pass: without the in-process check, SQLite queues them behind it, to replay it once it is done).
      await entered;
      await until(() => answered.length >= 7, 3000);
      release();
      const results = await Promise.all(sent);
      const created = results.filter((r) => r.status === 201);
      expect({ created: created.length, running: results.filter((r) => r.status === 409).length }).toEqual({ created: 1, running: 7 });
      expect(created[0].headers.get('idempotent-replayed')).toBeNull();
      for (const r of results) if (r !== created[0]) expectStillRunning(r);
      expect(await stored()).toBe(before + 1);
      // Once it is done, the same request is its replay, on either instance.
      for (const on of [held, other]) {
        const again = await send(on, body, key);
        expect([again.status, again.headers.get('idempotent-replayed'), again.body]).toEqual([201, 'true', created[0].body]);
      }
    },
  );

  test(`twins at another instance get 409 from the claim row, and another caller is not held up (${dialect})`, async () => {
    const key = freshKey('twins-elsewhere');
    const body = posts.valid(next());
    const before = await stored();
    const { entered, release } = armHold();
    const first = create(held, 'alice', body, key);
    await entered;
    // Another instance reads the claim without writing: on SQLite a write would wait for the file's
    // lock, which the first holds until it commits.
    const twins = Array.from({ length: 7 }, () => create(other, 'alice', body, key));
    await Promise.race([Promise.all(twins), sleep(3000)]);
    // Bob's key is his own: his create runs (on SQLite once the one connection is free).
    const bob = create(held, 'bob', body, key);
    release();
    for (const r of await Promise.all(twins)) expectStillRunning(r);
    expectFirst(await first, posts);
    expectFirst(await bob, posts);
    expect(await stored()).toBe(before + 2);
    expectReplayOf(await create(other, 'alice', body, key), await first);
  });
});

test('keys are stored in the database: a restarted service replays them', async () => {
  // A database of its own, so that the first service can be shut down completely (pool included).
  const database = await createTestDatabase();
  const serve = async (db: typeof database.db) => {
    const express = await createApp({ db, bodyLimit: 1024 * 1024, fallbackHost: 'localhost' });
    const server: Server = await new Promise((resolve) => {
      const s = express.listen(0, '127.0.0.1', () => resolve(s));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const on = {
      url,
      database,
      async request(method: string, path: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) {
        const headers: Record<string, string> = { ...opts.headers };
        if (opts.body !== undefined) headers['content-type'] = 'application/json';
        const res = await fetch(url + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
        const text = await res.text();
        const body = (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text;
        await assertMatchesContract({ method, path: path.split('?')[0], status: res.status, headers: res.headers, body });
        return { status: res.status, headers: res.headers, body };
      },
      async close() {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      },
    } as unknown as TestApp;
    return on;
  };

  let db = database.db;
  try {
    const key = freshKey('restart');
    const first = await serve(db);
    const bodies = fixtures.map((f) => f.valid(next()));
    const firsts: TestResponse[] = [];
    for (const [i, f] of fixtures.entries()) {
      const res = await post(f, bodies[i], key, first);
      expectFirst(res, f);
      firsts.push(res);
    }
    await first.close();
    await db.destroy();

    db = openDb(database.config);
    const second = await serve(db);
    try {
      for (const [i, f] of fixtures.entries()) {
        expectReplayOf(await post(f, bodies[i], key, second), firsts[i]);
        expectKeyProblem(await post(f, f.valid(next()), key, second), 'idempotency-mismatch');
        const listed = await second.request('GET', `/api/${f.name}/`);
        expect(listed.body.count).toBe(1);
      }
    } finally {
      await second.close();
    }
  } finally {
    await dropTestDatabase(database.config, db);
  }
  // A database of its own, migrated from nothing: on a loaded CI machine that alone takes most of a minute.
}, 180_000);

// Migration 014 gave keys their caller; the keys stored before it are the open caller's, so an API
// without tokens replays them as before. Stepped back and forth on this file's open API.
test('keys stored before keys had callers belong to the open caller', async () => {
  const db = app.database.db;
  const f = byName.posts;
  const key = freshKey('before-callers');
  const body = f.valid(next());
  const first = await post(f, body, key);
  expectFirst(first, f);
  // A token's key under the same name: the old unique key cannot hold both, so stepping back drops it.
  await db('idempotency_keys').insert({
    collection: f.name,
    caller: 'alice',
    idem_key: key,
    request_hash: bodyHash(body),
    state: 'running',
    created_at: dbTimestamp(),
  });
  // By name: a collection added later has a migration after it.
  await db.migrate.down({ migrationSource, tableName: 'knex_migrations', name: '20261129_014_idempotency_callers' });
  expect(await db.schema.hasColumn('idempotency_keys', 'caller')).toBe(false);
  expect(await db('idempotency_keys').where({ collection: f.name, idem_key: key }).count({ n: '*' })).toEqual([{ n: 1 }]);

  await migrate(db);
  expect(await db('idempotency_keys').where({ collection: f.name, idem_key: key }).select('caller')).toEqual([{ caller: OPEN_CALLER }]);
  expectReplayOf(await post(f, body, key), first);
});

import { seekRecords, walkRecords, walkSnapshot } from '../../../src/handlers/pages';
import type { Knex } from 'knex';
import { createSearch } from '../../../src/search';
import { type WalkRequest } from '../../../src/db/walk';
import { DEFAULT_ORDER, type OrderKey } from '../../../src/db/order';
import { seedCollection } from '../../../scripts/seed/index';

const search = createSearch();
import { startTestApp, type TestApp } from '../../helpers/app';

// The keyset walk behind exports: every matching row, once, in the list's order, whatever the
// batch size; and a walk (or an HTTP export) whose reader is gone stops querying.
const ROWS = 20_000;
const SOME = { column: 'id', op: 'lte' as const, value: 600 };
const table = { table: 'posts', searchFields: ['title', 'content'] };
let app: TestApp;
const queries: string[] = [];
beforeAll(async () => {
  app = await startTestApp();
  await seedCollection(app.database.db, 'posts', ROWS);
  app.database.db.on('query', (q: Knex.Sql) => queries.push(q.sql));
}, 60_000);
afterAll(() => app.close());

const by = (column: string, desc = false, extra: Partial<OrderKey> = {}): OrderKey => ({ column, desc, ...extra });

async function ids(rows: AsyncIterable<{ id: unknown }>): Promise<number[]> {
  const out: number[] = [];
  for await (const r of rows) out.push(Number(r.id));
  return out;
}

test.each<[string, WalkRequest]>([
  ['the default order', { terms: [], filters: [SOME], order: DEFAULT_ORDER }],
  [
    'an ordering with many ties (author), then id',
    { terms: [], filters: [SOME], order: [by('author', false, { text: 'exact' }), by('id')] },
  ],
  ['descending title', { terms: [], filters: [SOME], order: [by('title', true, { text: 'exact' }), by('id', true)] }],
  ['a search', { terms: ['the'], filters: [SOME], order: DEFAULT_ORDER }],
  [
    'a search and a second filter, oldest first',
    { terms: ['a'], filters: [SOME, { column: 'id', op: 'gte', value: 100 }], order: [by('created_at'), by('id')] },
  ],
])('%s: every matching row once, in order, for any batch size', async (_name, request) => {
  const want = (await seekRecords(app.database.db, table, { ...request, backward: false, limit: ROWS + 1 }, search)).map((r) =>
    Number(r.id),
  );
  expect(want.length).toBeGreaterThan(10);
  for (const batchSize of [1, 7, 600, 1000]) {
    expect(await ids(walkRecords(app.database.db, search, table, request, { batchSize }))).toEqual(want);
  }
});

test('an aborted walk makes no further query', async () => {
  const stop = new AbortController();
  const seen: number[] = [];
  queries.length = 0;
  for await (const row of walkRecords(
    app.database.db,
    search,
    table,
    { terms: [], filters: [], order: DEFAULT_ORDER },
    { batchSize: 100, signal: stop.signal },
  )) {
    seen.push(Number(row.id));
    if (seen.length === 150) stop.abort();
  }
  expect(seen.length).toBe(200); // the batch in hand is finished; the next is never read
  expect(queries.filter((q) => /from [`"]posts[`"]/i.test(q)).length).toBe(2);
});

test('a client that stops reading holds the walk (backpressure); one that disconnects ends it', async () => {
  queries.length = 0;
  const posts = () => queries.filter((q) => /from [`"]posts[`"]/i.test(q)).length;
  const pause = () => new Promise((r) => setTimeout(r, 500));
  const abort = new AbortController();
  const res = await fetch(`${app.url}/api/posts/export/`, { headers: { accept: 'application/x-ndjson' }, signal: abort.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  await reader.read();
  // Socket buffers on both sides take some batches (about 1 KB a post); then writes wait, and
  // the walk with them: the count of queries settles.
  let paused = -1;
  for (let i = 0; i < 20 && posts() !== paused; i++) {
    paused = posts();
    await pause();
  }
  expect(posts()).toBe(paused);
  expect(paused).toBeLessThan(ROWS / 1000 + 1); // a whole walk is 21 queries
  abort.abort();
  await reader.cancel().catch(() => undefined);
  await pause();
  expect(posts()).toBe(paused);
  const complete = await fetch(`${app.url}/api/posts/export/`, { headers: { accept: 'application/x-ndjson' } });
  expect((await complete.text()).split('\n').length - 1).toBe(ROWS);
});

// An export ordered by updated_at while records were patched repeated rows (a patched
// row moved ahead of the walk and was read again). A snapshot walk reads every batch as the first
// one saw the table, on both databases, while the writes go on and commit.
describe('a walk beside writes', () => {
  const order = [by('updated_at'), by('id')];
  const request: WalkRequest = { terms: [], filters: [{ column: 'id', op: 'lte', value: 300 }], order };
  const touch = (from: number, to: number, stamp: string) =>
    app.database
      .db('posts')
      .whereBetween('id', [from, to])
      .update({ updated_at: stamp, version: app.database.db.raw('version + 1') });

  async function walkWhilePatching(walk: typeof walkRecords): Promise<number[]> {
    const seen: number[] = [];
    let stamp = Date.parse('2030-01-01T00:00:00.000Z');
    for await (const row of walk(app.database.db, search, table, request, { batchSize: 50 })) {
      seen.push(Number(row.id));
      // Without a snapshot the walk would chase the rows moved ahead of it for ever.
      if (seen.length >= 600) break;
      // After each batch, every row of this walk's range is made the newest: ahead of the walk.
      if (seen.length % 50 === 0) await touch(1, 300, new Date((stamp += 1000)).toISOString().replace('T', ' ').slice(0, 23));
    }
    return seen;
  }

  test('without a snapshot, rows are repeated (what the snapshot prevents)', async () => {
    const seen = await walkWhilePatching(walkRecords);
    expect(new Set(seen).size).toBeLessThan(seen.length);
  });

  test('in a snapshot, each row once, as the table was when the walk began; the writes are committed', async () => {
    const before = (await seekRecords(app.database.db, table, { ...request, backward: false, limit: 1000 }, search)).map((r) =>
      Number(r.id),
    );
    const seen = await walkWhilePatching(walkSnapshot);
    expect(seen).toEqual(before);
    const [{ newest }] = await app.database.db('posts').where('id', '<=', 300).min({ newest: 'updated_at' });
    expect(String(newest) > '2030').toBe(true);
  });
});

import { RoaringBitmap32 } from 'roaring';
import type { Db } from '../../../src/db/connection';
import { parseSearch } from '../../../src/search';
import { indexPending, pendingTable } from '../../../src/search/sets/indexer';
import { matchingIds, type MatchStats } from '../../../src/search/sets/matches';
import { emptySetTables, readPairable, setPairable, setTables } from '../../../src/search/sets/store';
import { fixtures } from '../../helpers/fixtures';
import { pendingCount, scannedIds } from '../../helpers/scan';
import {
  type ClusterApp,
  describeCluster,
  type GaleraCluster,
  nodeDbs,
  prepareClusterDatabase,
  startCluster,
  startClusterApp,
} from '../../helpers/cluster';

// The guarantees of one server, on a 3-node Galera cluster with writers on every node: the
// conflicts that one server settles with row locks are settled here at commit (certification),
// and come back to the service as deadlocks that it runs again.

const DATABASE = 'records_cluster_races';
const posts = fixtures.find((f) => f.name === 'posts')!;
const books = fixtures.find((f) => f.name === 'books')!;

describeCluster('on a Galera cluster, writers on every node', () => {
  let cluster: GaleraCluster;
  /** One service instance per node. */
  let apps: ClusterApp[] = [];
  let nodes: Db[] = [];

  beforeAll(async () => {
    cluster = await startCluster();
    await prepareClusterDatabase(cluster, DATABASE);
    apps = await Promise.all(cluster.nodes.map((n) => startClusterApp(cluster.nodeUrl(n.index, DATABASE))));
    nodes = nodeDbs(cluster, DATABASE);
  }, 180_000);
  afterAll(async () => {
    await Promise.all([...apps.map((a) => a.close()), ...nodes.map((db) => db.destroy())]);
    await cluster?.destroy();
  }, 60_000);

  const through = (i: number) => apps[i % apps.length];

  test('a record created on one node is read at once on every other (read-your-writes)', async () => {
    for (let i = 0; i < 10; i++) {
      const created = await through(i).request('POST', '/api/posts/', { body: posts.valid(i) });
      expect(created.status).toBe(201);
      const read = await through(i + 1).request('GET', `/api/posts/${created.body.id}/`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);
    }
  });

  test('20 If-Match writers racing through different nodes: exactly one wins', async () => {
    const created = await through(0).request('POST', '/api/posts/', { body: posts.valid(100) });
    const id = created.body.id;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        through(i).request('PUT', `/api/posts/${id}/`, {
          body: { ...posts.valid(200 + i) },
          headers: { 'If-Match': created.headers.get('etag')! },
        }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array(19).fill(412)]);
    const winner = results.find((r) => r.status === 200)!;
    expect(winner.headers.get('etag')).toBe('"2"');
    for (const db of nodes) {
      const row = await db('posts').where({ id }).first();
      expect({ version: row.version, title: row.title }).toEqual({ version: 2, title: winner.body.title });
    }
  });

  test('20 creates racing with one Idempotency-Key through different nodes: exactly one record', async () => {
    const body = posts.valid(300);
    const headers = { 'Idempotency-Key': 'cluster-race-key' };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => through(i).request('POST', '/api/posts/', { body, headers })));
    // The one that claims the key creates; the others replay it, or hear that it is still running.
    const statuses = new Set(results.map((r) => r.status));
    expect([...statuses].every((s) => s === 201 || s === 409)).toBe(true);
    const ids = new Set(results.filter((r) => r.status === 201).map((r) => r.body.id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    // A retry after the race replays the one record.
    const again = await through(1).request('POST', '/api/posts/', { body, headers });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe([...ids][0]);
    for (const db of nodes) expect(await db('posts').where({ title: body.title })).toHaveLength(1);
  });

  test('counts stay exact through concurrent creates and deletes on every node', async () => {
    const created = await Promise.all(
      Array.from({ length: 60 }, (_, i) => through(i).request('POST', '/api/tasks/', { body: { title: `Task ${i}` } })),
    );
    expect(created.map((r) => r.status)).toEqual(Array(60).fill(201));
    const deleted = await Promise.all(created.slice(0, 25).map((r, i) => through(i + 1).request('DELETE', `/api/tasks/${r.body.id}/`)));
    expect(deleted.map((r) => r.status)).toEqual(Array(25).fill(204));
    for (const app of apps) {
      const list = await app.request('GET', '/api/tasks/');
      expect(list.body.count).toBe(35);
    }
    for (const db of nodes) {
      const [{ n }] = await db('tasks').count({ n: '*' });
      const [{ sum }] = await db('record_counts').where({ table_name: 'tasks' }).sum({ sum: 'n' });
      expect([Number(n), Number(sum)]).toEqual([35, 35]);
    }
  });

  // Bulk creates through every node, pairs of batches sharing their isbns: each batch is stored
  // whole or not at all, one of each pair wins, the ids answered are the rows stored (ids step by
  // the cluster's auto_increment_increment), and the counts stay exact.
  test('bulk creates racing through every node: all or none, ids as stored, counts exact', async () => {
    const SIZE = 40;
    const PAIRS = 3;
    const batch = (pair: number) => Array.from({ length: SIZE }, (_, i) => books.valid(700_000 + pair * 1000 + i));
    const [{ before }] = (await nodes[0]('books').count({ before: '*' })) as [{ before: number }];
    const results = await Promise.all(
      Array.from({ length: PAIRS * 2 }, (_, k) => through(k).request('POST', '/api/books/bulk/', { body: batch(k % PAIRS) })),
    );
    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    for (let pair = 0; pair < PAIRS; pair++) {
      const won = [results[pair], results[pair + PAIRS]].filter((r) => r.status === 201);
      expect(won).toHaveLength(1);
      for (const db of nodes) {
        const stored = await db('books')
          .whereIn(
            'isbn',
            batch(pair).map((b) => b.isbn as string),
          )
          .orderBy('id')
          .select('id', 'isbn');
        expect(stored.map((r) => [Number(r.id), r.isbn])).toEqual(
          won[0].body.results.map((r: { id: number; isbn: string }) => [r.id, r.isbn]),
        );
      }
    }
    for (const app of apps) {
      const list = await app.request('GET', '/api/books/?page_size=1');
      expect(list.body.count).toBe(Number(before) + PAIRS * SIZE);
    }
    const ids = results.filter((r) => r.status === 201).flatMap((r) => r.body.results.map((b: { id: number }) => b.id));
    expect((await through(1).request('POST', '/api/books/bulk-delete/', { body: { ids } })).status).toBe(204);
    for (const db of nodes) expect(await db('books').whereIn('id', ids)).toEqual([]);
  });

  // Bulk deletes through two nodes at once, pairs whose ids overlap by half: one of each pair
  // deletes its ids, the other is a 404 that deletes nothing, on every node, counts exact.
  test('bulk deletes racing through every node: one of each overlapping pair, the other deletes nothing', async () => {
    const SIZE = 40;
    const PAIRS = 3;
    // Pair p's span of ids: its first batch is the span's first SIZE, its second the last SIZE.
    const SPAN = SIZE * 1.5;
    const made = await through(0).request('POST', '/api/books/bulk/', {
      body: Array.from({ length: PAIRS * SPAN }, (_, i) => books.valid(800_000 + i)),
    });
    expect(made.status).toBe(201);
    const all: number[] = made.body.results.map((b: { id: number }) => b.id);
    const [{ before }] = (await nodes[0]('books').count({ before: '*' })) as [{ before: number }];
    const ids = (pair: number, second: boolean) => {
      const start = pair * SPAN + (second ? SPAN - SIZE : 0);
      return all.slice(start, start + SIZE);
    };
    const results = await Promise.all(
      Array.from({ length: PAIRS * 2 }, (_, k) =>
        through(k).request('POST', '/api/books/bulk-delete/', { body: { ids: ids(k % PAIRS, k >= PAIRS) } }),
      ),
    );
    let deleted = 0;
    for (let pair = 0; pair < PAIRS; pair++) {
      const statuses = [results[pair].status, results[pair + PAIRS].status];
      expect(statuses.sort()).toEqual([204, 404]);
      const won = results[pair].status === 204 ? ids(pair, false) : ids(pair, true);
      const lost = results[pair].status === 204 ? ids(pair, true) : ids(pair, false);
      const kept = lost.filter((id) => !won.includes(id));
      for (const db of nodes) {
        expect(await db('books').whereIn('id', won)).toEqual([]);
        expect((await db('books').whereIn('id', kept).select('id')).map((r) => Number(r.id))).toEqual(kept);
      }
      deleted += won.length;
    }
    for (const app of apps) {
      const list = await app.request('GET', '/api/books/?page_size=1');
      expect(list.body.count).toBe(Number(before) - deleted);
    }
  });

  // An indexer's locks on the pending rows hold off the writers of its own node only: between
  // nodes, certification must settle a batch against the writes it raced (each comes back as a
  // deadlock, run again), or the sets would keep text that a write on another node changed.
  test('indexers on every node racing writers on every node leave the sets exact', async () => {
    const fields = books.searchFields;
    // One at a time: the race under test is the indexers', not the creates'.
    const created = [];
    for (let i = 0; i < 60; i++)
      created.push(
        await through(i).request('POST', '/api/books/', {
          body: { ...books.valid(900 + i), title: `the book ${i}`, author: 'the author' },
        }),
      );
    expect(created.map((r) => r.status)).toEqual(Array(60).fill(201));
    const ids: number[] = created.map((r) => r.body.id);
    let writing = true;
    let batches = 0;
    const indexers = nodes.map(async (db) => {
      while (writing) {
        try {
          if (await indexPending(db, 'books', fields, { batch: 3 })) batches++;
        } catch (err) {
          // Conflicts past indexPending's own tries: the background indexer's next sweep would retry.
          if ((err as { code?: string }).code !== 'ER_LOCK_DEADLOCK') throw err;
        }
      }
    });
    // Three rounds of updates through every node, each on the round before; a quarter deleted last.
    const statuses: number[] = [];
    for (let round = 0; round < 3; round++) {
      const writes = await Promise.all(
        ids.map((id, i) =>
          round === 2 && i % 4 === 3
            ? through(i + round).request('DELETE', `/api/books/${id}/`)
            : through(i + round).request('PUT', `/api/books/${id}/`, {
                body: {
                  ...books.valid(900 + i),
                  title: `the volume ${i} revised ${round}`,
                  author: (i + round) % 2 ? 'the author' : 'another hand',
                },
              }),
        ),
      );
      statuses.push(...writes.map((r) => r.status));
    }
    writing = false;
    await Promise.all(indexers);
    expect(statuses).toEqual([...ids.map(() => 200), ...ids.map(() => 200), ...ids.map((_, i) => (i % 4 === 3 ? 204 : 200))]);
    expect(batches).toBeGreaterThan(0);

    // What is left pending, indexed; then every node holds the same sets, which search answers from alone.
    await indexPending(nodes[0], 'books', fields);
    const stored = await storedSets(nodes[0]);
    for (const db of nodes) {
      expect(await pendingCount(db, 'books')).toBe(0);
      expect(await storedSets(db)).toEqual(stored);
    }
    const searches = ['the', 'book', 'revised 2', 'revised 1', 'volume 1', '"the author"', 'another', 'hand'];
    const want: Record<string, number[]> = {};
    const got: Record<string, number[]> = {};
    for (const search of searches) {
      const terms = parseSearch(search);
      want[search] = (await scannedIds(nodes[2], 'books', fields, terms)).sort((a, b) => a - b);
      const stats = {} as MatchStats;
      got[search] = (await nodes[1].transaction((trx) => matchingIds(trx, 'books', fields, terms, { stats }))).toArray();
      expect(stats.pending).toBe(0);
    }
    expect(got).toEqual(want);
    for (const app of apps)
      for (const search of searches)
        expect((await app.request('GET', `/api/books/?search=${encodeURIComponent(search)}`)).body.count).toBe(want[search].length);
    expect(await scannedIds(nodes[0], 'books', fields, ['revised 2'])).toHaveLength(45);

    // ... and they are the sets indexing every record anew makes.
    const pairable = [...(await readPairable(nodes[0], 'books'))];
    await nodes[0].transaction(async (trx) => {
      await emptySetTables(trx, 'books');
      await trx.raw('INSERT INTO ?? (id, indexed) SELECT id, 0 FROM ??', [pendingTable('books'), 'books']);
      await setPairable(trx, 'books', pairable);
    });
    await indexPending(nodes[0], 'books', fields);
    expect(await storedSets(nodes[1])).toEqual(stored);
  });
});

/** Every key's ids, blocks joined, as one node holds them. */
async function storedSets(db: Db): Promise<Record<string, number[]>> {
  const rows: { k: Buffer; block: number; bits: Buffer }[] = await db(setTables('books').sets)
    .select('k', 'block', 'bits')
    .orderBy(['k', 'block']);
  const sets: Record<string, number[]> = {};
  for (const r of rows) {
    const key = Buffer.from(r.k).toString();
    sets[key] = [...(sets[key] ?? []), ...RoaringBitmap32.deserialize(Buffer.from(r.bits), 'portable').toArray()];
  }
  return sets;
}

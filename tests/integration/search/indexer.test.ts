import knex from 'knex';
import { RoaringBitmap32 } from 'roaring';
import { listRecords } from '../../../src/handlers/pages';
import { startIndexer } from '../../../src/search/indexer';
import { deleteRecord, insertRecord, updateRecord } from '../../../src/db/records';
import { createSearch, parseSearch } from '../../../src/search';
import { dbTimestamp } from '../../../src/db/time';
import { indexPending, pendingTable } from '../../../src/search/sets/indexer';
import { matchingIds, type MatchStats } from '../../../src/search/sets/matches';
import { planTerms } from '../../../src/search/sets/plan';
import { setReader, setTables } from '../../../src/search/sets/store';
import { inSnapshot } from '../../../src/search/list';
import { useTestDatabase, dialect } from '../../helpers/db';
import { fixtures } from '../../helpers/fixtures';
import { NEWEST_FIRST as order, pendingCount, scannedIds } from '../../helpers/scan';

// The service's background indexer, on both databases: what a create, a change of text or a
// delete leaves pending is indexed soon after the write in the same process (a nudge), and what
// others leave by the next sweep; indexers running at once take turns and index each record
// once; a failing database is reported once, not once a sweep.

const t = useTestDatabase();

async function until(check: () => Promise<boolean>, ms = 10000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Every id some set of the table holds (each indexed record holds its grams at least). */
async function idsInSets(table: string): Promise<number[]> {
  const rows: { bits: Buffer }[] = await t.db(setTables(table).sets).select('bits');
  return RoaringBitmap32.orMany(rows.map((r) => RoaringBitmap32.deserialize(r.bits, 'portable'))).toArray();
}

/** The ids the sets hold as surely holding the (folded) term. */
async function sureOf(table: string, term: string): Promise<number[]> {
  return (await planTerms(setReader(t.db, table), [term])).sure.toArray();
}

describe.each(fixtures.map((f) => [f.name, f] as const))('%s', (name, f) => {
  const pendingNone = async () => (await t.db(pendingTable(name)).first('id')) === undefined;
  let serial = 0;
  const values = () => {
    const at = dbTimestamp();
    return { ...f.defaults, ...f.valid(++serial + 100 * fixtures.indexOf(f)), created_at: at, updated_at: at };
  };

  test('a create, a change of text and a delete are indexed soon after, by the nudge', async () => {
    const indexer = startIndexer(t.db, { sweepMs: 3600000 });
    try {
      await until(pendingNone);
      const a = await insertRecord(t.db, name, values());
      const b = await insertRecord(t.db, name, values());
      const [field] = f.searchFields;
      const text = name === 'users' ? `Nudged.${serial}` : 'nudged text';
      await updateRecord(t.db, name, Number(a.id), { [field]: text });
      await deleteRecord(t.db, name, Number(b.id));
      const c = await insertRecord(t.db, name, values());
      await until(pendingNone, 5000);
      const held = await idsInSets(name);
      expect([a.id, b.id, c.id].map(Number).filter((id) => held.includes(id))).toEqual([Number(a.id), Number(c.id)]);
      expect(await sureOf(name, 'nudged')).toEqual([Number(a.id)]);
      expect(await idsInSets(name)).toEqual(((await t.db(name).orderBy('id').pluck('id')) as (number | string)[]).map(Number));
    } finally {
      await indexer.stop();
    }
  });

  test('what SQL around the service leaves is indexed by the next sweep', async () => {
    const indexer = startIndexer(t.db, { sweepMs: 100 });
    try {
      await until(pendingNone);
      const [id] = await t.db(name).insert(values());
      expect(await pendingNone()).toBe(false);
      await until(pendingNone, 5000);
      expect(await idsInSets(name)).toContain(Number(id));
    } finally {
      await indexer.stop();
    }
  });
});

describe('sharing, stopping and failing', () => {
  const name = 'posts';
  const f = fixtures.find((x) => x.name === name)!;

  test('two indexers at once take turns and index every pending record once', async () => {
    const at = dbTimestamp();
    const rows = Array.from({ length: 3000 }, (_, i) => ({ ...f.defaults, ...f.valid(5000 + i), created_at: at, updated_at: at }));
    for (let i = 0; i < rows.length; i += 500) await t.db(name).insert(rows.slice(i, i + 500));
    const listed = await pendingCount(t.db, name);
    expect(listed).toBeGreaterThanOrEqual(rows.length);
    // Lock waits are not fair, so one indexer may take every batch unless held: each waits
    // after its first batch (holding nothing) until the other has indexed one or ended.
    const resolve: (() => void)[] = [];
    const tookOne = [0, 1].map((i) => new Promise<void>((r) => (resolve[i] = r)));
    const indexer = (i: number) =>
      indexPending(t.db, name, f.searchFields, {
        batch: 100,
        onProgress: async () => {
          resolve[i]();
          await tookOne[1 - i];
        },
      }).finally(() => resolve[i]());
    const done = await Promise.all([indexer(0), indexer(1)]);
    expect(done[0] + done[1]).toBe(listed);
    expect(done.every((n) => n > 0)).toBe(true);
    expect(await pendingCount(t.db, name)).toBe(0);
    expect(await idsInSets(name)).toEqual(((await t.db(name).orderBy('id').pluck('id')) as (number | string)[]).map(Number));
    // Each record once in each of its sets: a word's set has every record that holds it, no more.
    const terms = parseSearch(f.valid(5000)[f.searchFields[0]] as string);
    const stats: MatchStats = { sure: 0, checked: 0, pending: 0 };
    const found = await inSnapshot(t.db, (db) => matchingIds(db, name, f.searchFields, terms, { stats }));
    expect(found.toArray()).toEqual((await scannedIds(t.db, name, f.searchFields, terms)).sort((a, b) => a - b));
    expect(stats.pending).toBe(0);
  });

  test('small batches that share words index what the scan finds', async () => {
    const at = dbTimestamp();
    const words = ['ostrich', 'Ostrich', 'pelican', 'émeu', 'ÉMEU', 'kiwi'];
    const rows = Array.from({ length: 24 }, (_, i) => ({
      ...f.defaults,
      ...f.valid(9000 + i),
      title: `${words[i % words.length]} ${words[(i * 5) % words.length]} bird${i % 4}`,
      created_at: at,
      updated_at: at,
    }));
    await t.db(name).insert(rows);
    await indexPending(t.db, name, f.searchFields, { batch: 5 });
    expect(await pendingCount(t.db, name)).toBe(0);
    const engine = createSearch();
    for (const search of ['ostrich', 'ÉMEU', 'pelican kiwi', 'bird3', 'strich emeu', '"ostrich pelican"', '"u bi"']) {
      const terms = parseSearch(search);
      const found = await listRecords(
        t.db,
        { table: name, searchFields: f.searchFields },
        { terms, filters: [], order, page: 1, pageSize: 100 },
        engine,
      );
      const ids = await scannedIds(t.db, name, f.searchFields, terms);
      expect({ search, ids: 'rows' in found ? found.rows.map((r) => Number(r.id)) : [] }).toEqual({ search, ids });
    }
  });

  test('a stopped indexer indexes nothing more: writes after it stay pending', async () => {
    const indexer = startIndexer(t.db, { sweepMs: 50, delayMs: 10 });
    await until(async () => (await pendingCount(t.db, name)) === 0);
    await indexer.stop();
    const at = dbTimestamp();
    const row = await insertRecord(t.db, name, { ...f.defaults, ...f.valid(9500), created_at: at, updated_at: at });
    await new Promise((r) => setTimeout(r, 300));
    expect(((await t.db(pendingTable(name)).pluck('id')) as (number | string)[]).map(Number)).toEqual([Number(row.id)]);
    await indexPending(t.db, name, f.searchFields);
  });

  test('a database that fails is reported once while it fails', async () => {
    const away =
      dialect === 'mysql'
        ? knex({ client: 'mysql2', connection: { host: '127.0.0.1', port: 1, user: 'root' }, pool: { min: 0, max: 1 } })
        : knex({
            client: 'better-sqlite3',
            connection: { filename: '/nonexistent/records/away.sqlite3' },
            useNullAsDefault: true,
            pool: { min: 0, max: 1 },
          });
    const errors: unknown[] = [];
    const indexer = startIndexer(away, { sweepMs: 50, onError: (err) => errors.push(err) });
    await new Promise((r) => setTimeout(r, 600));
    await indexer.stop();
    await away.destroy();
    expect(errors).toHaveLength(1);
  });
});

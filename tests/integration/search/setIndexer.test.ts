import fc from 'fast-check';
import { RoaringBitmap32 } from 'roaring';
import { dialect, useTestDatabase } from '../../helpers/db';
import { searchFold } from '../../../src/search/fold';
import '../../../src/search'; // the SQLite functions of the scan's predicate
import { indexPending, pendingStatements, pendingTable } from '../../../src/search/sets/indexer';
import { matchingIds } from '../../../src/search/sets/matches';
import { planTerms } from '../../../src/search/sets/plan';
import { changeSets, createSetTables, dropSetTables, setPairable, setReader, setTables } from '../../../src/search/sets/store';

// The indexer on the database under test: whatever writes come, and whenever batches run, the
// sets with the pending records taken out and checked by the scan give the scan's matches.

const database = useTestDatabase();
const TABLE = 'set_docs';
const FIELDS = ['title', 'body'];
const mysql = dialect === 'mysql';

beforeEach(async () => {
  const db = database.db;
  await dropSetTables(db, TABLE);
  await db.schema.dropTableIfExists(pendingTable(TABLE));
  await db.schema.dropTableIfExists(TABLE);
  await db.raw(
    mysql
      ? `CREATE TABLE ${TABLE} (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, title TEXT NULL, body TEXT NULL) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`
      : `CREATE TABLE ${TABLE} (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NULL, body TEXT NULL)`,
  );
  await createSetTables(db, TABLE);
  for (const sql of pendingStatements(mysql, TABLE, FIELDS)) await db.raw(sql);
  await db.transaction((trx) => setPairable(trx, TABLE, ['the', 'and']));
});

const WORDS = ['the', 'and', 'thé', 'band', 'theory', 'café', 'CAFÉ', 'x', 'é', 'ab-c', 'naïve', 'ΣΑΣ'];
const text = fc.option(
  fc.array(fc.constantFrom(...WORDS), { maxLength: 5 }).map((ws) => ws.join(' ')),
  { nil: null },
);
type Op =
  | { kind: 'insert'; title: string | null; body: string | null }
  | { kind: 'update' | 'delete'; pick: number; title: string | null }
  | { kind: 'index' };
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), title: text, body: text }),
  fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), title: text }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat(), title: text }),
  fc.record({ kind: fc.constant('index' as const) }),
);

async function check(terms: readonly string[]): Promise<void> {
  const db = database.db;
  const rows: { id: number; title: string | null; body: string | null }[] = await db(TABLE).select('id', ...FIELDS);
  const truth = RoaringBitmap32.from(
    rows.filter((r) => terms.every((t) => [r.title, r.body].some((f) => f !== null && searchFold(f).includes(t)))).map((r) => Number(r.id)),
  );
  const pending = RoaringBitmap32.from(((await db(pendingTable(TABLE)).pluck('id')) as (number | string)[]).map(Number));
  const plan = await planTerms(setReader(db, TABLE), terms);
  // Outside the pending records the sets decide; the pending ones the scan's predicate checks.
  expect(RoaringBitmap32.andNot(RoaringBitmap32.andNot(plan.sure, pending), truth).toArray()).toEqual([]);
  expect(RoaringBitmap32.andNot(RoaringBitmap32.andNot(truth, pending), plan.candidates).toArray()).toEqual([]);
  // And together, in one snapshot, exactly the scan's matches.
  const ids = await db.transaction((trx) => matchingIds(trx, TABLE, FIELDS, terms));
  expect(ids.toArray()).toEqual(truth.toArray());
}

describe('the set indexer', () => {
  test('keeps the sets exact outside the pending records, through any writes and batches', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 15 }),
        fc.constantFrom(['th'], ['the'], ['and the'], ['café'], ['σας'], ['naïv'], ['e b'], ['the', 'café'], ['x', 'and the']),
        async (ops, terms) => {
          const db = database.db;
          for (const o of ops) {
            const ids = ((await db(TABLE).orderBy('id').pluck('id')) as (number | string)[]).map(Number);
            if (o.kind === 'insert') await db(TABLE).insert({ title: o.title, body: o.body });
            else if (o.kind === 'index') await indexPending(db, TABLE, FIELDS, { batch: 3 });
            else if (ids.length) {
              const id = ids[o.pick % ids.length];
              if (o.kind === 'update') await db(TABLE).where({ id }).update({ title: o.title });
              else await db(TABLE).where({ id }).delete();
            }
            await check(terms);
          }
          await indexPending(db, TABLE, FIELDS);
          expect(await db(pendingTable(TABLE)).count({ n: '*' })).toEqual([{ n: 0 }]);
          await check(terms);
        },
      ),
      { numRuns: 20 },
    );
  });

  test('lists a record once however often it is written before a batch, with the text the sets hold', async () => {
    const db = database.db;
    const [id]: number[] = await db(TABLE).insert({ title: 'first café', body: null });
    await indexPending(db, TABLE, FIELDS);
    await db(TABLE).where({ id }).update({ title: 'second' });
    await db(TABLE).where({ id }).update({ title: 'third' });
    await db(TABLE).where({ id }).update({ body: 'x' });
    const rows: { indexed: number; old_title: string }[] = await db(pendingTable(TABLE)).select('id', 'indexed', 'old_title');
    expect(rows).toEqual([expect.objectContaining({ indexed: 1, old_title: 'first café' })]);
    await indexPending(db, TABLE, FIELDS);
    expect((await planTerms(setReader(db, TABLE), ['café'])).candidates.size).toBe(0);
    expect((await planTerms(setReader(db, TABLE), ['third'])).sure.toArray()).toEqual([Number(id)]);
  });

  test('leaves a record unlisted when a write changes no search field', async () => {
    const db = database.db;
    await db(TABLE).insert({ title: 'same', body: 'same' });
    await indexPending(db, TABLE, FIELDS);
    await db(TABLE).update({ title: 'same' });
    expect(await db(pendingTable(TABLE)).count({ n: '*' })).toEqual([{ n: 0 }]);
  });

  // A reader reads only the words numbered past the last it read: a word committed after one
  // numbered later would never be read (two indexers, each holding its numbers uncommitted).
  // SQLite's writers take turns for a whole transaction (and its test pool has one connection).
  (mysql ? test : test.skip)('numbers words in commit order: a reader between two indexers misses neither word', async () => {
    const db = database.db;
    // Sets of another block already there, so that the two indexers' sets rows (and the gaps
    // between them) are apart: only the vocabulary can order them.
    const bits = Buffer.from(RoaringBitmap32.from([1]).serialize('portable'));
    await db(setTables(TABLE).sets).insert(['walpha', 'wbeta', 'wzz'].map((k) => ({ k: Buffer.from(k), block: 0, bits })));
    const reader = setReader(db, TABLE, {});
    expect((await reader.vocabulary()).words).toEqual([]);
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((r) => (releaseFirst = r));
    let firstIn!: () => void;
    const firstWrote = new Promise<void>((r) => (firstIn = r));
    const first = db.transaction(async (trx) => {
      await changeSets(trx, TABLE, [{ key: 'walpha', add: [70_000], remove: [] }]);
      firstIn();
      await firstHolds;
    });
    await firstWrote;
    // The second waits for the first's lock on the vocabulary.
    const second = db.transaction((trx) => changeSets(trx, TABLE, [{ key: 'wbeta', add: [70_001], remove: [] }]));
    await new Promise((r) => setTimeout(r, 300));
    const between = (await reader.vocabulary()).words;
    releaseFirst();
    await Promise.all([first, second]);
    expect(between).not.toContain('beta');
    expect([...(await reader.vocabulary()).words].sort()).toEqual(['alpha', 'beta']);
  });
});

import fc from 'fast-check';
import { RoaringBitmap32 } from 'roaring';
import { useTestDatabase } from '../../helpers/db';
import { searchFold } from '../../../src/search/fold';
import { KeyGatherer } from '../../../src/search/sets/keys';
import { planTerms } from '../../../src/search/sets/plan';
import {
  BLOCK_SIZE,
  changeSets,
  createSetTables,
  emptySetTables,
  dropSetTables,
  type SetChange,
  setPairable,
  setReader,
} from '../../../src/search/sets/store';

// The sets stored in the database under test: what the planner reads back must be what was
// written, across blocks, after changes and removals, and the vocabulary must grow in place.

const database = useTestDatabase();
const TABLE = 'set_records';

/** The keys of each record, as the indexer will compute them. */
function keysOf(fields: readonly string[], pairable: ReadonlySet<string>): Set<string> {
  const g = new KeyGatherer((w) => pairable.has(w));
  g.add(1, fields.map(searchFold));
  return new Set([...g.drain()].map(([k]) => k));
}

/** The changes that take the stored sets from `before` to `after` (records by id). */
function changesBetween(before: Map<number, string[]>, after: Map<number, string[]>, pairable: ReadonlySet<string>): SetChange[] {
  const changes = new Map<string, { add: number[]; remove: number[] }>();
  const of = (key: string) => {
    let c = changes.get(key);
    if (!c) changes.set(key, (c = { add: [], remove: [] }));
    return c;
  };
  for (const id of new Set([...before.keys(), ...after.keys()])) {
    const old = before.has(id) ? keysOf(before.get(id)!, pairable) : new Set<string>();
    const now = after.has(id) ? keysOf(after.get(id)!, pairable) : new Set<string>();
    for (const k of old) if (!now.has(k)) of(k).remove.push(id);
    for (const k of now) if (!old.has(k)) of(k).add.push(id);
  }
  return [...changes].map(([key, c]) => ({ key, ...c }));
}

function scan(records: Map<number, string[]>, terms: readonly string[]): number[] {
  return [...records]
    .filter(([, fields]) => terms.every((t) => fields.some((f) => searchFold(f).includes(t))))
    .map(([id]) => id)
    .sort((a, b) => a - b);
}

beforeEach(async () => {
  await dropSetTables(database.db, TABLE);
  await createSetTables(database.db, TABLE);
});

const WORDS = ['the', 'and', 'thé', 'band', 'theory', 'café', 'CAFÉ', 'x', 'é', 'ab-c', 'naïve', 'ΣΑΣ'];
const field = fc.array(fc.constantFrom(...WORDS), { maxLength: 6 }).map((ws) => ws.join(' '));
// Ids in several blocks, so that a set is stored as several rows.
const ids = fc.uniqueArray(fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: BLOCK_SIZE - 5, max: 2 * BLOCK_SIZE + 5 })), {
  minLength: 1,
  maxLength: 12,
});
const records = ids.chain((xs) => fc.tuple(...xs.map(() => fc.tuple(field, field))).map((fs) => new Map(xs.map((id, i) => [id, fs[i]]))));

describe('the stored sets', () => {
  test('answer the planner as the scan does, before and after records change or go', async () => {
    const pairable = new Set(['the', 'and']);
    await fc.assert(
      fc.asyncProperty(
        records,
        records,
        fc.constantFrom('th', 'the', 'and the', 'café', 'é', 'ab-c', 'e b', 'σας'),
        async (first, second, term) => {
          await emptySetTables(database.db, TABLE);
          await database.db.transaction(async (trx) => {
            await setPairable(trx, TABLE, [...pairable]);
            await changeSets(trx, TABLE, changesBetween(new Map(), first, pairable));
          });
          const check = async (now: Map<number, string[]>) => {
            const plan = await planTerms(setReader(database.db, TABLE), [term]);
            const truth = RoaringBitmap32.from(scan(now, [term]));
            expect(RoaringBitmap32.andNot(plan.sure, truth).toArray()).toEqual([]);
            expect(RoaringBitmap32.andNot(truth, plan.candidates).toArray()).toEqual([]);
          };
          await check(first);
          // Some records replaced, some deleted (those only in `first`), some added.
          const after = new Map([...second].map(([id, fields]) => [id, fields]));
          await database.db.transaction((trx) => changeSets(trx, TABLE, changesBetween(first, after, pairable)));
          await check(after);
        },
      ),
      { numRuns: 25 },
    );
  });

  test('keep no row for a block whose set is empty, and keep words in the vocabulary', async () => {
    const pairable = new Set<string>();
    const one = new Map([[BLOCK_SIZE + 3, ['zebra crossing', '']]]);
    await database.db.transaction((trx) => changeSets(trx, TABLE, changesBetween(new Map(), one, pairable)));
    const reader = setReader(database.db, TABLE);
    expect((await reader.vocabulary()).words).toEqual(expect.arrayContaining(['zebra', 'crossing']));
    await database.db.transaction((trx) => changeSets(trx, TABLE, changesBetween(one, new Map(), pairable)));
    expect(await database.db(`${TABLE}_search_sets`).count({ n: '*' })).toEqual([{ n: 0 }]);
    expect((await planTerms(reader, ['zebra'])).candidates.size).toBe(0);
    // A word that comes back is not numbered twice; a reader that knew it reads nothing new.
    await database.db.transaction((trx) => changeSets(trx, TABLE, changesBetween(new Map(), one, pairable)));
    expect((await reader.vocabulary()).words.filter((w) => w === 'zebra')).toHaveLength(1);
    expect((await planTerms(reader, ['ebra'])).sure.toArray()).toEqual([BLOCK_SIZE + 3]);
  });
});

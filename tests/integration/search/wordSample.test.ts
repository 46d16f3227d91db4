import { listRecords } from '../../../src/handlers/pages';
import { deleteRecord, insertRecord } from '../../../src/db/records';
import { createSearch, defaultTuning, type SearchTuning } from '../../../src/search';
import { dbTimestamp } from '../../../src/db/time';
import { indexPending } from '../../../src/search/mysql/wordIndex';
import { sampleTerms } from '../../../src/search/mysql/wordSample';
import { foldCollation } from '../../../src/search/predicate';
import { createTestDatabase, dialect, logStatements, type TestDatabase } from '../../helpers/db';
import { fixtures } from '../../helpers/fixtures';
import { NEWEST_FIRST as order } from '../../helpers/scan';

// MySQL's search samples the newest records to tell common terms (wordSample.ts). A sample is
// kept while the table's newest record stays the same, and a term's server fold is kept: what a
// search finds never depends on either, only how it runs.

let t: TestDatabase;
let statements: string[];
/** A sample of 4 records, so that a few rows reach every path. */
const tuning: SearchTuning = { ...defaultTuning, sample: 4 };
beforeAll(async () => {
  t = await createTestDatabase();
  statements = logStatements(t.db);
});
afterAll(async () => {
  await t.drop();
});

const mysqlOnly = dialect === 'mysql' ? describe : describe.skip;
const sampled = () => statements.filter((s) => s.includes('SUM((INSTR(')).length;

mysqlOnly.each(fixtures.map((f) => [f.name, f] as const))('%s', (name, f) => {
  const spec = { table: name, searchFields: f.searchFields };
  let serial = 0;
  async function insert(text: string): Promise<number> {
    const at = dbTimestamp();
    serial += 1;
    // A word of its own as well: users' search fields are unique.
    const body = { ...f.defaults, ...f.valid(serial + 1000 * fixtures.indexOf(f)), [f.searchFields[0]]: `${text} n${serial}` };
    const row = await insertRecord(t.db, name, { ...body, created_at: at, updated_at: at });
    return Number(row.id);
  }
  const plan = async (terms: string[]) => sampleTerms(t.db, name, f.searchFields, terms, await foldCollation(t.db), tuning);

  test('a table smaller than the sample has no common term; a full one does, and tells the share', async () => {
    const ids = [await insert('zebu quokka'), await insert('zebu')];
    await indexPending(t.db, name);
    expect(await plan(['zebu'])).toEqual({ common: new Set(), share: 1, pending: false });
    ids.push(await insert('zebu'), await insert('zebu'));
    await indexPending(t.db, name);
    // A term is common past a fifth of the sample's 4 records: held by any.
    expect(await plan(['zebu', 'okapi'])).toEqual({ common: new Set(['zebu']), share: 1 / 4, pending: false });
    ids.push(await insert('zebu okapi'));
    // Not indexed yet: pending.
    expect(await plan(['zebu', 'okapi'])).toEqual({ common: new Set(['zebu', 'okapi']), share: 2 / 4, pending: true });
    for (const id of ids) await deleteRecord(t.db, name, id);
    await indexPending(t.db, name);
  });

  test('a sample is read again only for new terms, or once the newest record changed', async () => {
    const ids = await Promise.all(['capybara', 'capybara', 'tapir', 'capybara tapir'].map(insert));
    await indexPending(t.db, name);
    const before = sampled();
    expect((await plan(['capybara'])).common).toEqual(new Set(['capybara']));
    expect((await plan(['capybara'])).common).toEqual(new Set(['capybara']));
    expect(sampled() - before).toBe(1);
    // A new term alone is sampled; those known are not.
    expect(await plan(['capybara', 'tapir'])).toMatchObject({ common: new Set(['capybara', 'tapir']), share: 3 / 4 });
    expect(sampled() - before).toBe(2);
    // A record added: the newest ones changed, and so may any term's share.
    ids.push(await insert('tapir'));
    await indexPending(t.db, name);
    expect(await plan(['capybara', 'tapir'])).toMatchObject({ common: new Set(['capybara', 'tapir']), share: 3 / 4 });
    expect(sampled() - before).toBe(3);
    for (const id of ids) await deleteRecord(t.db, name, id);
    await indexPending(t.db, name);
  });

  test('a search folds a term on the server once; its results follow every write', async () => {
    // A piece of its own per collection: folds are kept per pool, whatever the table.
    const word = `Ñandú${'abcde'[fixtures.indexOf(f)]}`;
    const id = await insert(word);
    await indexPending(t.db, name);
    const folds = () => statements.filter((s) => s.includes('AS `folded`')).length;
    const before = folds();
    const search = async () =>
      listRecords(t.db, spec, { terms: [word.toUpperCase()], filters: [], order, page: 1, pageSize: 10 }, createSearch(tuning));
    expect(await search()).toMatchObject({ count: 1 });
    expect(await search()).toMatchObject({ count: 1 });
    expect(folds() - before).toBe(1);
    const other = await insert(word.toLowerCase());
    expect(await search()).toMatchObject({ count: 2 });
    await deleteRecord(t.db, name, id);
    await deleteRecord(t.db, name, other);
    await indexPending(t.db, name);
    expect(await search()).toMatchObject({ count: 0 });
  });
});

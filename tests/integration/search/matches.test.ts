import { listRecords, seekRecords } from '../../../src/handlers/pages';
import { openDb } from '../../../src/db/connection';
import { insertRecord } from '../../../src/db/records';
import { searchSchema } from '../../../src/search';
import { tunableSearch } from '../../helpers/search';
import { tokenTables } from '../../../src/search/sqlite/tokens';
import { dbTimestamp } from '../../../src/db/time';
import { indexPending, REMOVALS } from '../../../src/search/mysql/wordIndex';
import { NEWEST_FIRST as order, scannedIds } from '../../helpers/scan';
import { useTestDatabase, dialect, isTransactionControl, logStatements, pausingAfter } from '../../helpers/db';

// MySQL: the paths over FULLTEXT and the scan's predicate (postings.test.ts covers the postings').
const search = tunableSearch({ postings: 0 });
afterEach(() => search.reset());
import { fixtures } from '../../helpers/fixtures';

// A search's matches are read from the index once: the count is their number and the page is
// read among their ids, walking the order's index when many match. Reading them twice (a count,
// then the page's subquery) cost InnoDB FULLTEXT's visit of every matching document twice.

const TERM = 'quillwort';
const ROWS = 40;
/** Every third record holds the term. */
const holds = (i: number) => i % 3 === 0;

const t = useTestDatabase();
let statements: string[];
/** The page's statement: the last sent but a transaction's frame and the index's removal count (MySQL's search checks it last). */
const lastWork = () => statements.filter((sql) => !isTransactionControl(sql) && !sql.includes(REMOVALS)).at(-1);
beforeAll(() => {
  statements = logStatements(t.db);
});

describe.each(fixtures.map((f) => [f.name, f] as const))('%s', (name, f) => {
  const spec = { table: name, searchFields: f.searchFields };
  /** Ids of the records that hold the term, newest first. */
  const want: number[] = [];
  beforeAll(async () => {
    for (let i = 0; i < ROWS; i++) {
      const at = dbTimestamp(Date.UTC(2026, 0, 1, 0, 0, i));
      const body = { ...f.defaults, ...f.valid(i) };
      // No white space: usernames allow none, and the term is found inside the token anyway.
      body[f.searchFields[0]] = `${holds(i) ? TERM : 'bramble'}${i}`;
      const row = await insertRecord(t.db, name, { ...body, created_at: at, updated_at: at });
      if (holds(i)) want.unshift(Number(row.id));
    }
    // Indexed as the service's writes leave them (rows inserted by SQL stay pending on MySQL).
    if (dialect === 'mysql') await indexPending(t.db, name);
  });
  beforeEach(() => void (statements.length = 0));

  const readsOfIndex = () => statements.filter((sql) => /match/i.test(sql));

  test('a page and its count: the matches read once, the page among their ids', async () => {
    // SQLite: the trigram index's path (the token index reads its matches again for the page,
    // cheaply, by design); the sample of 40 rows could find the term in under tokenShare of them.
    search.tune({ tokenShare: -1 });
    const result = await listRecords(t.db, spec, { terms: [TERM], filters: [], order, page: 1, pageSize: 5 }, search);
    expect(result).toMatchObject({ count: want.length });
    expect(('rows' in result ? result.rows : []).map((r) => Number(r.id))).toEqual(want.slice(0, 5));
    // (A plan may probe how many candidates there are, bounded by a LIMIT: trigrams.ts.)
    expect(readsOfIndex().filter((sql) => /count\(/i.test(sql) && !/limit/i.test(sql))).toEqual([]);
    expect(readsOfIndex()).not.toContainEqual(lastWork());
  });

  // The plan's probe of a long term's rarest trigrams reads the rows that may hold it; the
  // predicate then runs on those, where it once read the index for them again.
  (dialect === 'sqlite' ? test : test.skip)(
    'SQLite: a term narrowed by its rarest trigrams reads the index once, in the plan',
    async () => {
      search.tune({ tokenShare: -1 });
      const result = await listRecords(t.db, spec, { terms: [TERM], filters: [], order, page: 1, pageSize: 5 }, search);
      expect(result).toMatchObject({ count: want.length });
      expect(('rows' in result ? result.rows : []).map((r) => Number(r.id))).toEqual(want.slice(0, 5));
      expect(readsOfIndex()).toHaveLength(1);

      // No candidate: nothing is read after the probe, for the count or the page.
      statements.length = 0;
      const none = await listRecords(t.db, spec, { terms: ['quillworz'], filters: [], order, page: 1, pageSize: 5 }, search);
      expect(none).toEqual({ count: 0, rows: [] });
      expect(statements.filter((sql) => !isTransactionControl(sql))).toEqual(readsOfIndex());
      expect(readsOfIndex()).toHaveLength(1);
      statements.length = 0;
      expect(await seekRecords(t.db, spec, { terms: ['quillworz'], filters: [], order, backward: false, limit: 5 }, search)).toEqual([]);
      expect(statements.filter((sql) => !isTransactionControl(sql))).toEqual(readsOfIndex());
      expect(readsOfIndex()).toHaveLength(1);
    },
  );

  // The predicate reads each candidate's row: it sorts their order's keys there too, and a page
  // (from an offset, or a cursor's first page either way) is then only its own rows by id.
  (dialect === 'sqlite' ? test : test.skip)(
    "SQLite: a narrowed term's matches are read in the page's order; the page reads its rows by id",
    async () => {
      const pageById = /^select \* from `\w+` where `id` in \(\?, \?, \?\)$/i;
      const listed = await listRecords(t.db, spec, { terms: [TERM], filters: [], order, page: 2, pageSize: 3 }, search);
      expect({ count: listed.count, ids: ('rows' in listed ? listed.rows : []).map((r) => Number(r.id)) }).toEqual({
        count: want.length,
        ids: want.slice(3, 6),
      });
      expect(lastWork()).toMatch(pageById);

      for (const [backward, ids] of [
        [false, want.slice(0, 3)],
        [true, want.slice(-3)],
      ] as const) {
        statements.length = 0;
        const rows = await seekRecords(t.db, spec, { terms: [TERM], filters: [], order, backward, limit: 3 }, search);
        expect(rows.map((r) => Number(r.id))).toEqual(ids);
        expect(lastWork()).toMatch(pageById);
      }
      // Past a boundary, the page is read among them.
      const boundary = await t.db(name).where({ id: want[5] }).first();
      const after = order.map((k) => boundary[k.column]);
      for (const [backward, ids] of [
        [false, want.slice(6, 9)],
        [true, want.slice(2, 5)],
      ] as const) {
        const rows = await seekRecords(t.db, spec, { terms: [TERM], filters: [], order, after, backward, limit: 3 }, search);
        expect(rows.map((r) => Number(r.id))).toEqual(ids);
      }
    },
  );

  // A term SQLite's LIKE cannot stand for goes to the fold alone: a lone surrogate reaches
  // SQLite as U+FFFD. (No request carries one, nor a NUL, which LIKE would stop at: the HTTP
  // layer refuses NUL and URLs cannot encode lone surrogates; this is for callers in process.)
  (dialect === 'sqlite' ? test : test.skip)('SQLite: a candidate LIKE would wrongly take is checked by the fold', async () => {
    const [field] = f.searchFields;
    const at = dbTimestamp(Date.UTC(2026, 0, 2));
    const body = { ...f.defaults, ...f.valid(100), [field]: 'abc\ufffdxyz', created_at: at, updated_at: at };
    const { id } = await insertRecord(t.db, name, body);
    try {
      const term = 'abc\ud800xyz';
      const listed = await listRecords(t.db, spec, { terms: [term], filters: [], order, page: 1, pageSize: 5 }, search);
      expect(await scannedIds(t.db, name, f.searchFields, [term])).toEqual([]);
      expect(listed).toEqual({ count: 0, rows: [] });
    } finally {
      await t.db(name).where({ id }).delete();
    }
  });

  // A short term is a phrase the probe alone checks (the trigram index), or both terms are
  // found from the vocabulary's tokens (the token index): the statements after the first read of
  // the index must see the rows it saw, though another process (here another connection) writes
  // in between.
  (dialect === 'sqlite' ? test.each : test.skip.each)([
    ['trigram', searchSchema.indexTable(name), -1],
    ['token', tokenTables(name).grams, 1],
  ])(
    'SQLite: a record re-texted by another connection after the %s index is read is seen as it was read',
    async (_index, readFirst, tokenShare) => {
      search.tune({ tokenShare });
      const [field] = f.searchFields;
      // Another connection, as another process has (the service's functions registered on it).
      const other = openDb(t.config);
      const id = want[0];
      const [before] = (await t.db(name).where({ id }).pluck(field)) as string[];
      const short = before.slice(-4); // `rt39`: two trigrams, a phrase
      let armed = false;
      const { db } = pausingAfter(t.db, readFirst, async () => {
        if (!armed) return;
        armed = false;
        await other(name)
          .where({ id })
          .update({ [field]: `${TERM}x` });
      });
      const request = { terms: [TERM, short], filters: [], order };
      try {
        armed = true;
        const listed = await listRecords(db, spec, { ...request, page: 1, pageSize: 5 }, search);
        expect(armed).toBe(false);
        expect({ count: listed.count, rows: ('rows' in listed ? listed.rows : []).map((r) => [Number(r.id), r[field]]) }).toEqual({
          count: 1,
          rows: [[id, before]],
        });
        await t
          .db(name)
          .where({ id })
          .update({ [field]: before });
        armed = true;
        const sought = await seekRecords(db, spec, { ...request, backward: false, limit: 5 }, search);
        expect(armed).toBe(false);
        expect(sought.map((r) => [Number(r.id), r[field]])).toEqual([[id, before]]);
      } finally {
        await t
          .db(name)
          .where({ id })
          .update({ [field]: before });
        await other.destroy();
      }
    },
  );

  test('a cursor page: the page among the matches read before', async () => {
    const rows = await seekRecords(t.db, spec, { terms: [TERM], filters: [], order, backward: false, limit: 5 }, search);
    expect(rows.map((r) => Number(r.id))).toEqual(want.slice(0, 5));
    expect(readsOfIndex()).not.toContainEqual(lastWork());
  });

  (dialect === 'mysql' ? test : test.skip)('MySQL walks the order index among many matches, and only then', async () => {
    await listRecords(t.db, spec, { terms: [TERM], filters: [], order, page: 1, pageSize: 5 }, search);
    expect(lastWork()).toMatch(/force index/i);
    search.tune({ walkPerMatch: 0 });
    {
      statements.length = 0;
      const result = await listRecords(t.db, spec, { terms: [TERM], filters: [], order, page: 1, pageSize: 5 }, search);
      expect(('rows' in result ? result.rows : []).map((r) => Number(r.id))).toEqual(want.slice(0, 5));
      expect(lastWork()).not.toMatch(/force index/i);
    }
  });

  /** A statement narrowed by the index: its subquery, or the candidates the plan read from it (SQLite). */
  const NARROWED = /match|json_each/i;

  // Past what is held, a page that expects to fill within walkRows entries of the order walks
  // them with the scan's predicate; one whose matches all lie further (the old `bramble1x`
  // records) does not fill there and is read as before.
  test('more matches than held: the page walks the order with the predicate, within walkRows', async () => {
    search.tune({ maxPreloaded: 0, walkRows: 8 });
    {
      const walked = await listRecords(t.db, spec, { terms: [TERM], filters: [], order, page: 1, pageSize: 2 }, search);
      expect(('rows' in walked ? walked.rows : []).map((r) => Number(r.id))).toEqual(want.slice(0, 2));
      expect(lastWork()).not.toMatch(NARROWED);

      const old = [19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 1].filter((i) => !holds(i)).map((i) => `bramble${i}`);
      statements.length = 0;
      const read = await listRecords(t.db, spec, { terms: ['bramble1'], filters: [], order, page: 1, pageSize: 2 }, search);
      const names = ('rows' in read ? read.rows : []).map((r) => String(r[f.searchFields[0]]));
      expect({ count: read.count, names }).toEqual({ count: old.length, names: old.slice(0, 2) });
      expect(lastWork()).toMatch(NARROWED);
    }
  });
});

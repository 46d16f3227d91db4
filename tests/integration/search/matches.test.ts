import { listRecords, seekRecords } from '../../../src/handlers/pages';
import { openDb } from '../../../src/db/connection';
import { insertRecord } from '../../../src/db/records';
import type { Filter } from '../../../src/db/filters';
import { dbTimestamp } from '../../../src/db/time';
import { inSnapshot } from '../../../src/search/list';
import { indexPending, pendingTable } from '../../../src/search/sets/indexer';
import { matchingIds, type MatchStats } from '../../../src/search/sets/matches';
import { setTables } from '../../../src/search/sets/store';
import { tunableSearch } from '../../helpers/search';
import { NEWEST_FIRST as order, pendingCount, scannedIds } from '../../helpers/scan';
import { useTestDatabase, dialect, isTransactionControl, logStatements, pausingAfter } from '../../helpers/db';
import { fixtures } from '../../helpers/fixtures';

const search = tunableSearch();
afterEach(() => search.reset());

// A search's matches are the set of ids from the sets (and the check of pending records and
// candidates): the count is its size, and a page is read among those ids — a slice of the set
// in id order, a walk of the order's index, or the database's sort of the ids — then its rows
// by id. The sets are read once, in the plan; the record table only for checks and the page.

const TERM = 'quillwort';
const ROWS = 40;
/** Every third record holds the term. */
const holds = (i: number) => i % 3 === 0;

const t = useTestDatabase();
let statements: string[];
/** The page's statement: the last sent but a transaction's frame. */
const lastWork = () => statements.filter((sql) => !isTransactionControl(sql)).at(-1);
beforeAll(() => {
  statements = logStatements(t.db);
});

/** Quoted as knex quotes identifiers on either database. */
const named = (table: string) => `\`${table}\``;

describe.each(fixtures.map((f) => [f.name, f] as const))('%s', (name, f) => {
  const spec = { table: name, searchFields: f.searchFields };
  const fields = f.searchFields;
  /** Ids of the records that hold the term, newest first. */
  const want: number[] = [];
  /** Statements that read the record table itself (not its sets or pending list). */
  const readsOfRecords = () => statements.filter((sql) => sql.includes(named(name)) && !isTransactionControl(sql));
  const readsOfSets = () => statements.filter((sql) => sql.includes(named(setTables(name).sets)));
  const pageById = new RegExp(`^select \\* from ${named(name)} where \`id\` in \\((\\?(, )?)+\\)$`, 'i');

  beforeAll(async () => {
    for (let i = 0; i < ROWS; i++) {
      const at = dbTimestamp(Date.UTC(2026, 0, 1, 0, 0, i));
      const body = { ...f.defaults, ...f.valid(i) };
      // No white space: usernames allow none, and the term is found inside the word anyway.
      body[fields[0]] = `${holds(i) ? TERM : 'bramble'}${i}`;
      const row = await insertRecord(t.db, name, { ...body, created_at: at, updated_at: at });
      if (holds(i)) want.unshift(Number(row.id));
    }
    await indexPending(t.db, name, fields);
  });
  beforeEach(() => void (statements.length = 0));

  test('a page and its count: the sets read once, in the plan; nothing checked; the page by id', async () => {
    const result = await listRecords(t.db, spec, { terms: [TERM], filters: [], order, page: 1, pageSize: 5 }, search);
    expect(result).toMatchObject({ count: want.length });
    expect(('rows' in result ? result.rows : []).map((r) => Number(r.id))).toEqual(want.slice(0, 5));
    // A word's set answers: no row is checked with the predicate, and nothing counts the matches.
    expect(readsOfSets()).toHaveLength(1);
    expect(readsOfRecords().filter((sql) => /count\(/i.test(sql) && !/count\(\*\)/i.test(sql))).toEqual([]);
    expect(readsOfRecords().filter((sql) => /like|search_fold|lower\(/i.test(sql))).toEqual([]);
    expect(lastWork()).toMatch(pageById);
    const firstOfRecords = statements.indexOf(readsOfRecords()[0]);
    expect(statements.lastIndexOf(readsOfSets()[0])).toBeLessThan(firstOfRecords);
  });

  test('matchingIds: indexed records decided by the sets, pending ones and candidates checked', async () => {
    const stats: MatchStats = { sure: 0, checked: 0, pending: 0 };
    const match = async (term: string) => (await inSnapshot(t.db, (db) => matchingIds(db, name, fields, [term], { stats }))).toArray();
    expect(await match(TERM)).toEqual([...want].sort((a, b) => a - b));
    expect(stats).toEqual({ sure: want.length, checked: 0, pending: 0 });

    // A record written since is pending: checked, never taken from the sets.
    const at = dbTimestamp(Date.UTC(2026, 0, 3));
    const row = await insertRecord(t.db, name, {
      ...f.defaults,
      ...f.valid(500),
      [fields[0]]: 'hedge.bindweed',
      created_at: at,
      updated_at: at,
    });
    const id = Number(row.id);
    try {
      expect(await match(TERM)).toEqual([...want].sort((a, b) => a - b));
      expect(stats).toEqual({ sure: want.length, checked: 1, pending: 1 });
      expect(await match('bindweed')).toEqual([id]);
      expect(stats).toEqual({ sure: 0, checked: 1, pending: 1 });
      await indexPending(t.db, name, fields);
      expect(await match('bindweed')).toEqual([id]);
      expect(stats).toEqual({ sure: 1, checked: 0, pending: 0 });
      // Across words, with no pair sets: the records holding both ends are candidates, checked.
      expect(await match('ge.bin')).toEqual([id]);
      expect(stats).toEqual({ sure: 0, checked: 1, pending: 0 });
      expect(await match('ge.bix')).toEqual([]);
      expect(stats.sure).toBe(0);
    } finally {
      await t.db(name).where({ id }).delete();
      await indexPending(t.db, name, fields);
    }
    expect(await pendingCount(t.db, name)).toBe(0);
    expect(await match('bindweed')).toEqual([]);
    expect(stats).toEqual({ sure: 0, checked: 0, pending: 0 });
  });

  // No candidate: nothing is read after the plan, for the count or the page.
  test('a term no record holds reads no row of the table, for a page or a cursor page', async () => {
    const none = await listRecords(t.db, spec, { terms: ['quillworz'], filters: [], order, page: 1, pageSize: 5 }, search);
    expect(none).toEqual({ count: 0, rows: [] });
    expect(readsOfRecords()).toEqual([]);
    // The plan read the vocabulary: no word holds the term, so no set is read either.
    expect(statements.filter((sql) => sql.includes(named(setTables(name).words)))).toHaveLength(1);
    expect(readsOfSets()).toEqual([]);
    statements.length = 0;
    expect(await seekRecords(t.db, spec, { terms: ['quillworz'], filters: [], order, backward: false, limit: 5 }, search)).toEqual([]);
    expect(readsOfRecords()).toEqual([]);
    // A filter changes nothing of that.
    statements.length = 0;
    const filters: Filter[] = [{ column: 'id', op: 'gte', value: 1 }];
    expect(await listRecords(t.db, spec, { terms: ['quillworz'], filters, order, page: 1, pageSize: 5 }, search)).toEqual({
      count: 0,
      rows: [],
    });
    expect(readsOfRecords()).toEqual([]);
  });

  test('pages by offset and by cursor, forward, backward and past a boundary, are read by id', async () => {
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
      statements.length = 0;
      const rows = await seekRecords(t.db, spec, { terms: [TERM], filters: [], order, after, backward, limit: 3 }, search);
      expect(rows.map((r) => Number(r.id))).toEqual(ids);
      expect(lastWork()).toMatch(pageById);
    }
    // A page past the last: its count, no rows read.
    statements.length = 0;
    expect(await listRecords(t.db, spec, { terms: [TERM], filters: [], order, page: 6, pageSize: 3 }, search)).toEqual({
      count: want.length,
      pastEnd: true,
    });
    expect(readsOfRecords()).toEqual([]);
  });

  // A term SQLite's LIKE cannot stand for goes to the fold alone: a lone surrogate reaches
  // SQLite as U+FFFD. (No request carries one, nor a NUL, which LIKE would stop at: the HTTP
  // layer refuses NUL and URLs cannot encode lone surrogates; this is for callers in process.)
  test('a candidate LIKE would wrongly take is checked by the fold, pending and indexed', async () => {
    const [field] = fields;
    const at = dbTimestamp(Date.UTC(2026, 0, 2));
    const body = { ...f.defaults, ...f.valid(100), [field]: 'abc\ufffdxyz', created_at: at, updated_at: at };
    const { id } = await insertRecord(t.db, name, body);
    try {
      const term = 'abc\ud800xyz';
      for (const state of ['pending', 'indexed']) {
        if (state === 'indexed') await indexPending(t.db, name, fields);
        const listed = await listRecords(t.db, spec, { terms: [term], filters: [], order, page: 1, pageSize: 5 }, search);
        const scanned = await scannedIds(t.db, name, fields, [term]);
        // MySQL's driver sends the lone half as U+FFFD too: there the record matches.
        expect(scanned).toEqual(dialect === 'sqlite' ? [] : [Number(id)]);
        expect({ state, count: listed.count, ids: 'rows' in listed ? listed.rows.map((r) => Number(r.id)) : [] }).toEqual({
          state,
          count: scanned.length,
          ids: scanned,
        });
      }
    } finally {
      await t.db(name).where({ id }).delete();
      await indexPending(t.db, name, fields);
    }
  });

  // A search's statements see one snapshot: another process (here another connection) that
  // changes a record's text and indexes it between them must not make the search see the
  // record half old, half new (in the sets but not pending, or the other way round).
  test.each([
    ['its sets are read', () => setTables(name).sets],
    ['the pending list is read', () => pendingTable(name)],
  ])('a record re-texted and re-indexed by another connection after %s is seen as it was read', async (_when, readFirst) => {
    const [field] = fields;
    const other = openDb(t.config);
    const id = want[0];
    const [before] = (await t.db(name).where({ id }).pluck(field)) as string[];
    const short = before.slice(-4); // `rt39`: inside the word, its set from the vocabulary
    let armed = false;
    const { db, runs } = pausingAfter(t.db, readFirst(), async () => {
      if (!armed) return;
      armed = false;
      await other(name)
        .where({ id })
        .update({ [field]: `${TERM}x` });
      await indexPending(other, name, fields);
    });
    const request = { terms: [TERM, short], filters: [], order };
    try {
      armed = true;
      const listed = await listRecords(db, spec, { ...request, page: 1, pageSize: 5 }, search);
      expect(runs()).toBeGreaterThan(0);
      expect(armed).toBe(false);
      expect({ count: listed.count, rows: ('rows' in listed ? listed.rows : []).map((r) => [Number(r.id), r[field]]) }).toEqual({
        count: 1,
        rows: [[id, before]],
      });
      // Now it is gone for a new search.
      expect(await scannedIds(t.db, name, fields, request.terms)).toEqual([]);
      expect(await listRecords(t.db, spec, { ...request, page: 1, pageSize: 5 }, search)).toEqual({ count: 0, rows: [] });
      await t
        .db(name)
        .where({ id })
        .update({ [field]: before });
      await indexPending(t.db, name, fields);
      armed = true;
      const sought = await seekRecords(db, spec, { ...request, backward: false, limit: 5 }, search);
      expect(armed).toBe(false);
      expect(sought.map((r) => [Number(r.id), r[field]])).toEqual([[id, before]]);
    } finally {
      await t
        .db(name)
        .where({ id })
        .update({ [field]: before });
      await indexPending(t.db, name, fields);
      await other.destroy();
    }
  });

  test('a cursor page: the page among the matches read before', async () => {
    const rows = await seekRecords(t.db, spec, { terms: [TERM], filters: [], order, backward: false, limit: 5 }, search);
    expect(rows.map((r) => Number(r.id))).toEqual(want.slice(0, 5));
    expect(readsOfSets()).not.toContainEqual(lastWork());
    expect(lastWork()).toMatch(pageById);
  });

  /** The statement that walks the order: ids (and the order's keys) with no list of ids. */
  const walks = () => readsOfRecords().filter((sql) => /limit \?/i.test(sql) && !/ in \(/i.test(sql));
  /** The statement that sorts the matches through their ids. */
  const sorts = () => readsOfRecords().filter((sql) => /where id in \([\d,]+\)/i.test(sql) && /order by/i.test(sql));

  test('each page strategy as tuned: the order walked, the ids sorted, the set sliced by id', async () => {
    const page = (orderBy = order, pageSize = 5) =>
      listRecords(t.db, spec, { terms: [TERM], filters: [], order: orderBy, page: 1, pageSize }, search).then((r) =>
        'rows' in r ? r.rows.map((x) => Number(x.id)) : [],
      );
    // 14 matches among 40: a page of 5 expects to pass about 14 entries, within 4 per match.
    expect(await page()).toEqual(want.slice(0, 5));
    expect(walks()).toHaveLength(1);
    expect(sorts()).toEqual([]);
    // MySQL: told to walk the created_at index rather than sort the table.
    if (dialect === 'mysql') expect(walks()[0]).toMatch(/force index/i);

    search.tune({ walkPerMatch: 0 });
    statements.length = 0;
    expect(await page()).toEqual(want.slice(0, 5));
    expect(walks()).toEqual([]);
    expect(sorts()).toHaveLength(1);

    // More matches than inList: walked whatever walkPerMatch says.
    search.tune({ inList: want.length - 1 });
    statements.length = 0;
    expect(await page()).toEqual(want.slice(0, 5));
    expect(walks()).toHaveLength(1);
    expect(sorts()).toEqual([]);

    // Another order than the index's: sorted unless there are more matches than inList, then
    // walked without the index named.
    search.reset();
    const byUpdated = [
      { column: 'updated_at', desc: false },
      { column: 'id', desc: false },
    ];
    const oldest = [...want].reverse();
    statements.length = 0;
    expect(await page(byUpdated)).toEqual(oldest.slice(0, 5));
    expect(sorts()).toHaveLength(1);
    search.tune({ inList: 0 });
    statements.length = 0;
    expect(await page(byUpdated)).toEqual(oldest.slice(0, 5));
    expect(walks()).toHaveLength(1);
    expect(walks()[0]).not.toMatch(/force index/i);

    // By id: a slice of the set, whatever the tuning; the table is read for the page's rows only.
    for (const desc of [false, true]) {
      statements.length = 0;
      expect(await page([{ column: 'id', desc }], 3)).toEqual((desc ? want : oldest).slice(0, 3));
      expect(readsOfRecords()).toHaveLength(1);
      expect(lastWork()).toMatch(pageById);
    }
  });

  // A page expects to pass `pageSize × records / matches` entries of the order before it fills:
  // within walkPerMatch per match it walks them, else the database sorts the matches.
  test('few matches spread far are sorted; many, walked', async () => {
    search.tune({ walkPerMatch: 1 });
    const walked = await listRecords(t.db, spec, { terms: [TERM], filters: [], order, page: 1, pageSize: 2 }, search);
    expect(('rows' in walked ? walked.rows : []).map((r) => Number(r.id))).toEqual(want.slice(0, 2));
    expect(walks()).toHaveLength(1);
    expect(sorts()).toEqual([]);

    const old = [19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 1].filter((i) => !holds(i)).map((i) => `bramble${i}`);
    statements.length = 0;
    const read = await listRecords(t.db, spec, { terms: ['bramble1'], filters: [], order, page: 1, pageSize: 2 }, search);
    const names = ('rows' in read ? read.rows : []).map((r) => String(r[fields[0]]));
    expect({ count: read.count, names }).toEqual({ count: old.length, names: old.slice(0, 2) });
    expect(walks()).toEqual([]);
    expect(sorts()).toHaveLength(1);
  });

  // Few matches: the filters checked on their ids; more than inList: the filters' ids read
  // whole and intersected with the matches.
  test('filters: checked among few matches by id, or read whole and intersected among many', async () => {
    const filters: Filter[] = [{ column: 'id', op: 'lte', value: want[4] }];
    const kept = want.filter((id) => id <= want[4]);
    const filtersById = () => readsOfRecords().filter((sql) => /where id in \([\d,]+\) and/i.test(sql) && !/order by/i.test(sql));
    const filtersWhole = () => readsOfRecords().filter((sql) => /^select `id` from `\w+` where `id` <= \?$/i.test(sql));
    for (const [tuning, byId] of [
      [{}, true],
      [{ inList: want.length - 1 }, false],
      [{ inList: 0, walkPerMatch: 0 }, false],
      [{ walkPerMatch: 0 }, true],
    ] as const) {
      search.tune(tuning);
      statements.length = 0;
      const listed = await listRecords(t.db, spec, { terms: [TERM], filters, order, page: 1, pageSize: 20 }, search);
      expect({ tuning, count: listed.count, ids: 'rows' in listed ? listed.rows.map((r) => Number(r.id)) : [] }).toEqual({
        tuning,
        count: kept.length,
        ids: kept,
      });
      expect({ tuning, byId: filtersById().length, whole: filtersWhole().length }).toEqual({
        tuning,
        byId: byId ? 1 : 0,
        whole: byId ? 0 : 1,
      });
      const sought = await seekRecords(t.db, spec, { terms: [TERM], filters, order, backward: true, limit: 3 }, search);
      expect(sought.map((r) => Number(r.id))).toEqual(kept.slice(-3));
      search.reset();
    }
  });
});

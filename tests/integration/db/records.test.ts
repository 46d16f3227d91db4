import { listRecords, seekRecords } from '../../../src/handlers/pages';
import { insertRecord } from '../../../src/db/records';
import { dbTimestamp } from '../../../src/db/time';
import { createSearch } from '../../../src/search';
import { NEWEST_FIRST as order } from '../../helpers/scan';

const search = createSearch();
import { useTestDatabase, dialect, isTransactionControl } from '../../helpers/db';

// A search may take several statements (the index's lookups, the count, the page): on MySQL
// together they get one query timeout, so that however many its plan takes, no search holds
// connections for longer than one statement may. A list without a search gives each statement
// the timeout whole.

const QUERY_TIMEOUT_MS = 5000;
/** How long each statement is held up before it runs, so that the budget visibly shrinks. */
const STALL_MS = 40;
const spec = { table: 'posts', searchFields: ['title', 'content'] };

const t = useTestDatabase({ size: 2, queryTimeoutMs: QUERY_TIMEOUT_MS });
/** The timeout of each statement run, in order, as knex reports it when it sends one. */
let timeouts: number[] = [];
beforeAll(async () => {
  for (let i = 0; i < 30; i++) {
    const at = dbTimestamp(Date.UTC(2026, 0, 1, 0, 0, i));
    await insertRecord(t.db, 'posts', {
      title: `river ${i}`,
      content: i % 2 ? 'lantern' : 'stone',
      author: 'a',
      created_at: at,
      updated_at: at,
    });
  }
  t.db.on('query', (q: { sql: string; timeout?: number }) => {
    if (isTransactionControl(q.sql)) return;
    timeouts.push(q.timeout ?? 0);
    const until = Date.now() + STALL_MS;
    while (Date.now() < until); // the event is synchronous: the statement waits for this
  });
});
beforeEach(() => (timeouts = []));

const list = (search: string[]) => ({ terms: search, filters: [], order, page: 1, pageSize: 5 });

/** Each statement has what the ones before it left (their stalls at least). */
function expectOneBudget(): void {
  expect(timeouts[0]).toBeLessThanOrEqual(QUERY_TIMEOUT_MS);
  expect(timeouts[0]).toBeGreaterThan(QUERY_TIMEOUT_MS - 1000);
  timeouts.slice(1).forEach((ms, i) => expect(ms).toBeLessThanOrEqual(timeouts[i] - STALL_MS));
}

(dialect === 'mysql' ? test : test.skip)('a page with a search: its statements (count, page) share one timeout', async () => {
  expect(await listRecords(t.db, spec, list(['river', 'lantern']), search)).toMatchObject({ count: 15 });
  expect(timeouts.length).toBeGreaterThanOrEqual(2);
  expectOneBudget();
});

// SQLite's run on the search thread, where nothing could stop a statement: there the budget
// bounds the wait for the thread (tests/integration/db/connection.test.ts).
(dialect === 'sqlite' ? test : test.skip)(
  'SQLite: a page with a search: its statements run to their end, on the search thread',
  async () => {
    expect(await listRecords(t.db, spec, list(['river', 'lantern']), search)).toMatchObject({ count: 15 });
    expect(timeouts.length).toBeGreaterThanOrEqual(2);
    expect(timeouts.filter(Boolean)).toEqual([]);
  },
);

// On SQLite a cursor page with a search is one statement; on MySQL the word index is read first.
(dialect === 'mysql' ? test : test.skip)('a cursor page with a search: its statements share one timeout', async () => {
  expect(await seekRecords(t.db, spec, { ...list(['river', 'lantern']), backward: false, limit: 5 }, search)).toHaveLength(5);
  expect(timeouts.length).toBeGreaterThanOrEqual(2);
  expectOneBudget();
});

test('a list without a search: each statement gets the timeout whole', async () => {
  const result = await listRecords(t.db, spec, { ...list([]), filters: [{ column: 'author', op: 'eq', value: 'a' }] }, search);
  expect(result).toMatchObject({ count: 30 });
  expect(timeouts.length).toBeGreaterThanOrEqual(2);
  expect(timeouts.every((ms) => ms === QUERY_TIMEOUT_MS)).toBe(true);
});

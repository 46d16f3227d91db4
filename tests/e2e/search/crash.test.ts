import { migrateDatabase } from '../../../src/schema';
import { listRecords } from '../../../src/handlers/pages';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseDatabaseUrl } from '../../../src/config';
import { type Db, ensureMysqlDatabase, openDb } from '../../../src/db/connection';
import { deleteRecord, insertRecord } from '../../../src/db/records';
import { dbTimestamp } from '../../../src/db/time';
import { createSearch, defaultTuning, parseSearch, type SearchTuning } from '../../../src/search';
import { planSearch } from '../../../src/search/plan';
import { indexPending, wordTables } from '../../../src/search/mysql/wordIndex';
import { createTestDatabase, dialect, type TestDatabase } from '../../helpers/db';
import { canRunMariadb, type PrivateMariadb, startPrivateMariadb } from '../../helpers/mariadb';
import { NEWEST_FIRST as order, pendingCount, scannedIds } from '../../helpers/scan';

// A writer killed with SIGKILL in the middle of its writes (SQLite, where the index lives in the
// rows' transactions), or a database server killed with SIGKILL under a writer and its background
// indexer (MySQL: a server of the test's own, restarted on the same data), leaves indexed search
// answering exactly what a scan answers, before and after the records left pending are indexed.
// On MySQL this fails about one run in six on a loaded machine when a batch's docs rows are
// removed and written in one transaction (wordIndex.ts).

const spec = { table: 'posts', searchFields: ['title', 'content'] };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function startWriter(target: string, tuning: Partial<SearchTuning> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'tests/helpers/searchWriter.ts', target], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, SEARCH_TUNING: JSON.stringify(tuning) },
  });
  const ready = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  const kill = async () => {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  };
  return { ready, kill };
}

async function expectIndexedEqualsScan(db: Db, tuning: Partial<SearchTuning> = {}): Promise<void> {
  const [{ n }] = await db('posts').count({ n: '*' });
  expect(Number(n)).toBeGreaterThan(20);
  for (const search of [
    'école',
    'ÉCOLE',
    'σοφός',
    'STRASSE',
    'straße',
    'changed',
    'body',
    '🎉 party',
    'bêta',
    'a',
    '"body 1"',
    'hang',
    'e',
  ]) {
    const terms = parseSearch(search);
    const ids = await scannedIds(db, 'posts', spec.searchFields, terms);
    // SQLite: through the trigram index, then through the token index wherever it decides.
    for (const tokenShare of dialect === 'sqlite' ? [-1, 1] : [defaultTuning.tokenShare]) {
      const engine = createSearch({ ...tuning, tokenShare });
      const indexed = await listRecords(db, spec, { terms, filters: [], order, page: 1, pageSize: 10 }, engine);
      expect({ search, tokenShare, count: indexed.count, page: 'rows' in indexed ? indexed.rows.map((r) => Number(r.id)) : [] }).toEqual({
        search,
        tokenShare,
        count: ids.length,
        page: ids.slice(0, 10),
      });
    }
  }
}

(dialect === 'sqlite' ? describe : describe.skip)('search index after a crash of the writer', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  test('kill -9 mid-writes, reopen: indexed search equals the scan', async () => {
    const filename = (database.config as { filename: string }).filename;
    for (let round = 0; round < 3; round++) {
      const writer = startWriter(filename);
      await writer.ready;
      await sleep(700 + 300 * round);
      await writer.kill();
    }
    await expectIndexedEqualsScan(database.db);
  });
});

(dialect === 'mysql' && canRunMariadb() ? describe : describe.skip)('search index after a crash of the database server', () => {
  let mariadb: PrivateMariadb;
  let db: Db | undefined;
  // Terms common in a sample of 10, and words dense in 30% of the records (`changed` is in
  // nearly all): common terms are counted from the dense words' lists, which the writer's
  // indexer chooses and fills again every half second.
  const tuning = { sample: 10, denseShare: 0.3 };
  beforeAll(async () => {
    mariadb = await startPrivateMariadb();
  }, 120000);
  afterAll(async () => {
    await db?.destroy();
    await mariadb?.destroy();
  });

  test('kill -9 of mariadbd mid-writes, restart: indexed search equals the scan', async () => {
    const url = mariadb.url(`records_test_crash_${randomBytes(4).toString('hex')}`);
    const config = parseDatabaseUrl(url);
    await ensureMysqlDatabase(config);
    await migrateDatabase(config);
    const writer = startWriter(url, tuning);
    await writer.ready;
    for (let round = 0; round < 2; round++) {
      await sleep(2500 + 1000 * round);
      await mariadb.stop('SIGKILL');
      await mariadb.start();
    }
    await sleep(1500);
    await writer.kill();
    db = openDb(config);
    await expectIndexedEqualsScan(db, tuning);
    // Then as the background indexer leaves it: what answers is the index, not a scan of records
    // left pending.
    await indexPending(db, 'posts');
    const [{ n: pending }] = await db(wordTables('posts').pending).count({ n: '*' });
    const [{ n: docs }] = await db(wordTables('posts').docs).count({ n: '*' });
    expect(Number(pending)).toBe(0);
    expect(Number(docs)).toBeGreaterThan(20);
    expect((await planSearch(db, spec, ['changed'], { ...defaultTuning, ...tuning })).count).toBeDefined();
    await expectIndexedEqualsScan(db, tuning);
  }, 180000);

  // InnoDB's own doc ids were handed out again after a crash, from the highest left in the
  // table: records created after the newest ones were deleted were never found again.
  test('records deleted, server killed, restarted: the records created next are found', async () => {
    const url = mariadb.url(`records_test_reuse_${randomBytes(4).toString('hex')}`);
    const config = parseDatabaseUrl(url);
    await ensureMysqlDatabase(config);
    await migrateDatabase(config);
    const at = dbTimestamp();
    const post = (n: number) => ({ title: `zanzibar ${n}`, content: 'x', author: 'w', created_at: at, updated_at: at });
    let before = openDb(config);
    const ids: number[] = [];
    for (let n = 0; n < 6; n++) ids.push(Number((await insertRecord(before, 'posts', post(n))).id));
    for (const id of ids.slice(3)) await deleteRecord(before, 'posts', id);
    await indexPending(before, 'posts');
    await before.destroy();
    await mariadb.stop('SIGKILL');
    await mariadb.start();
    before = openDb(config);
    for (let n = 6; n < 9; n++) ids.push(Number((await insertRecord(before, 'posts', post(n))).id));
    await indexPending(before, 'posts');
    await before.destroy();
    await db?.destroy();
    db = openDb(config);
    const terms = parseSearch('zanzibar');
    const found = await listRecords(db, spec, { terms, filters: [], order, page: 1, pageSize: 10 }, createSearch());
    expect(await pendingCount(db, 'posts')).toBe(0);
    expect('rows' in found ? found.rows.map((r) => Number(r.id)).sort((a, b) => a - b) : []).toEqual([...ids.slice(0, 3), ...ids.slice(6)]);
  }, 60000);
});

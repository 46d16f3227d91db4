import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseDatabaseUrl } from '../../src/config';
import { type Db, ensureMysqlDatabase, openDb } from '../../src/db/connection';
import { startIndexer } from '../../src/db/indexer';
import { migrateDatabase } from '../../src/db/migrations';
import { deleteRecord, insertRecord, listRecords } from '../../src/db/records';
import { dbTimestamp } from '../../src/db/time';
import { parseSearch } from '../../src/db/search';
import { indexPending, wordTables } from '../../src/db/wordIndex';
import { createTestDatabase, dialect, type TestDatabase } from '../helpers/db';
import { canRunMariadb, type PrivateMariadb, startPrivateMariadb } from '../helpers/mariadb';
import { NEWEST_FIRST as order, pendingCount, scannedIds } from '../helpers/scan';

// The index lives in the same transactions as the rows: a writer killed with SIGKILL in the
// middle of its writes (SQLite), or a database server killed with SIGKILL under a writer (MySQL:
// a server of the test's own, restarted on the same data), leaves indexed search answering
// exactly what a scan answers.

const spec = { table: 'posts', searchFields: ['title', 'content'] };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function startWriter(target: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'tests/helpers/searchWriter.ts', target], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  const kill = async () => {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  };
  return { ready, kill };
}

async function uptime(db: Db): Promise<number> {
  const [rows] = (await db.raw("SHOW GLOBAL STATUS LIKE 'Uptime'")) as [{ Value: string }[]];
  return Number(rows[0].Value);
}

async function until(check: () => Promise<boolean>, ms = 30000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await sleep(100);
  }
}

async function expectIndexedEqualsScan(db: Db): Promise<void> {
  const [{ n }] = await db('posts').count({ n: '*' });
  expect(Number(n)).toBeGreaterThan(20);
  for (const search of ['école', 'ÉCOLE', 'σοφός', 'STRASSE', 'straße', 'changed', 'body', '🎉 party', 'bêta', 'a', '"body 1"']) {
    const terms = parseSearch(search);
    const ids = await scannedIds(db, 'posts', spec.searchFields, terms);
    const indexed = await listRecords(db, spec, { terms, filters: [], order, page: 1, pageSize: 10 });
    expect({ search, count: indexed.count, page: 'rows' in indexed ? indexed.rows.map((r) => Number(r.id)) : [] }).toEqual({
      search,
      count: ids.length,
      page: ids.slice(0, 10),
    });
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
    const writer = startWriter(url);
    await writer.ready;
    for (let round = 0; round < 2; round++) {
      await sleep(2500 + 1000 * round);
      await mariadb.stop('SIGKILL');
      await mariadb.start();
    }
    await sleep(1500);
    await writer.kill();
    db = openDb(config);
    await expectIndexedEqualsScan(db);
    // Then as the background indexer leaves it once the server has run a few seconds (it writes
    // nothing before, and then writes again what was written since the start): what answers is
    // the index, not a scan of records left pending.
    const indexer = startIndexer(db, { sweepMs: 200 });
    await until(async () => (await uptime(db!)) >= 7 && (await pendingCount(db!, 'posts')) === 0);
    await indexer.stop();
    const [{ n: pending }] = await db(wordTables('posts').pending).count({ n: '*' });
    const [{ n: docs }] = await db(wordTables('posts').docs).count({ n: '*' });
    expect(Number(pending)).toBe(0);
    expect(Number(docs)).toBeGreaterThan(20);
    await expectIndexedEqualsScan(db);
  }, 180000);

  // InnoDB left rows committed in the first second after a restart out of its index: the
  // indexer writes nothing while the server is that young, then writes again what others wrote.
  test('a server just started: the indexer waits, then writes again the docs rows written since the start', async () => {
    await mariadb.stop('SIGKILL');
    await mariadb.start();
    const url = mariadb.url(`records_test_young_${randomBytes(4).toString('hex')}`);
    const config = parseDatabaseUrl(url);
    await ensureMysqlDatabase(config);
    await migrateDatabase(config);
    await db?.destroy();
    db = openDb(config);
    const at = dbTimestamp();
    const post = (n: number) => ({ title: `quokka ${n}`, content: 'x', author: 'w', created_at: at, updated_at: at });
    const a = Number((await insertRecord(db, 'posts', post(1))).id);
    await indexPending(db, 'posts');
    const docId = async (id: number) => (await db!(wordTables('posts').docs).where({ id }).first('FTS_DOC_ID'))?.FTS_DOC_ID;
    const before = await docId(a);
    const indexer = startIndexer(db, { sweepMs: 200 });
    try {
      const b = Number((await insertRecord(db, 'posts', post(2))).id);
      await sleep(500);
      if ((await uptime(db)) < 4) expect(await pendingCount(db, 'posts')).toBe(1);
      await until(async () => (await uptime(db!)) >= 6 && (await pendingCount(db!, 'posts')) === 0);
      expect(await docId(b)).toBeDefined();
      expect(await docId(a)).not.toBe(before);
    } finally {
      await indexer.stop();
    }
  }, 60000);

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
    const found = await listRecords(db, spec, { terms, filters: [], order, page: 1, pageSize: 10 });
    expect(await pendingCount(db, 'posts')).toBe(0);
    expect('rows' in found ? found.rows.map((r) => Number(r.id)).sort((a, b) => a - b) : []).toEqual([...ids.slice(0, 3), ...ids.slice(6)]);
  }, 60000);
});

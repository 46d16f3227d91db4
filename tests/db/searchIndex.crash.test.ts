import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseDatabaseUrl } from '../../src/config';
import { type Db, ensureMysqlDatabase, openDb } from '../../src/db/connection';
import { migrateDatabase } from '../../src/db/migrations';
import { listRecords } from '../../src/db/records';
import { parseSearch } from '../../src/db/search';
import { wordTables } from '../../src/db/wordIndex';
import { createTestDatabase, dialect, type TestDatabase } from '../helpers/db';
import { canRunMariadb, type PrivateMariadb, startPrivateMariadb } from '../helpers/mariadb';
import { NEWEST_FIRST as order, scannedIds } from '../helpers/scan';

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
    // The writes went through the service's layer: what answered was the index, not a scan of
    // records left pending.
    const [{ n: pending }] = await db(wordTables('posts').pending).count({ n: '*' });
    const [{ n: docs }] = await db(wordTables('posts').docs).count({ n: '*' });
    expect(Number(pending)).toBe(0);
    expect(Number(docs)).toBeGreaterThan(20);
  }, 180000);
});

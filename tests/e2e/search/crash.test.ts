import { migrateDatabase } from '../../../src/schema';
import { listRecords } from '../../../src/handlers/pages';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { RoaringBitmap32 } from 'roaring';
import { parseDatabaseUrl } from '../../../src/config';
import { type Db, ensureMysqlDatabase, openDb } from '../../../src/db/connection';
import { deleteRecord, insertRecord } from '../../../src/db/records';
import { dbTimestamp } from '../../../src/db/time';
import { createSearch, indexLoaded, parseSearch } from '../../../src/search';
import { indexPending, pendingTable } from '../../../src/search/sets/indexer';
import { matchingIds, type MatchStats } from '../../../src/search/sets/matches';
import { emptySetTables, readPairable, setPairable, setTables } from '../../../src/search/sets/store';
import { createTestDatabase, dialect, type TestDatabase } from '../../helpers/db';
import { canRunMariadb, type PrivateMariadb, startPrivateMariadb } from '../../helpers/mariadb';
import { NEWEST_FIRST as order, pendingCount, scannedIds } from '../../helpers/scan';

// A writer with the background indexer killed with SIGKILL in the middle of its writes and
// batches (SQLite), or a database server killed with SIGKILL under them (MySQL: a server of the
// test's own, restarted on the same data), leaves search answering exactly what a scan answers,
// before and after the records left pending are indexed; and then the sets are those a rebuild
// makes.

const spec = { table: 'posts', searchFields: ['title', 'content'] };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function startWriter(target: string) {
  return killable(
    spawn(process.execPath, ['--import', 'tsx', 'tests/helpers/searchWriter.ts', target], { stdio: ['ignore', 'pipe', 'inherit'] }),
  );
}

/** `npm run search-index`: its batches are the indexer's, in a process of their own. */
function startIndexer(filename: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/search-index.ts', '--collection', 'posts'], {
    env: { ...process.env, DATABASE_URL: `sqlite:${filename}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Its progress, on stderr, after each batch committed.
  const indexed = new Promise<void>((resolve) => child.stderr.once('data', () => resolve()));
  return { indexed, ...killable(child) };
}

function killable(child: ChildProcess) {
  const ready = new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  };
  return { ready, kill };
}

// The writer's words (tests/helpers/searchWriter.ts), across fields' words and pairs.
const SEARCHES = [
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
  '"σοφός body"',
  '"alpha école"',
  '"party changed"',
  'ta σο',
  'gamma straße 1',
];

/** 1,200 posts of the writer's words, indexed as a load is: their pairs get sets. */
async function preload(db: Db): Promise<void> {
  const at = dbTimestamp();
  const texts = ['alpha ÉCOLE', 'bêta σοφός', 'gamma Straße', 'delta 🎉 party', 'epsilon école'];
  const rows = Array.from({ length: 1200 }, (_, n) => ({
    title: `${texts[n % 5]} ${n}`,
    content: `${texts[(n + 1) % 5]} body ${n}`,
    author: 'p',
    created_at: at,
    updated_at: at,
  }));
  for (let i = 0; i < rows.length; i += 200) await db('posts').insert(rows.slice(i, i + 200));
  await indexLoaded(db, 'posts');
  expect(await readPairable(db, 'posts')).toContain('body');
}

async function expectSearchEqualsScan(db: Db): Promise<void> {
  const [{ n }] = await db('posts').count({ n: '*' });
  expect(Number(n)).toBeGreaterThan(1220);
  const engine = createSearch();
  for (const search of SEARCHES) {
    const terms = parseSearch(search);
    const ids = await scannedIds(db, 'posts', spec.searchFields, terms);
    const found = await listRecords(db, spec, { terms, filters: [], order, page: 1, pageSize: 10 }, engine);
    expect({ search, count: found.count, page: 'rows' in found ? found.rows.map((r) => Number(r.id)) : [] }).toEqual({
      search,
      count: ids.length,
      page: ids.slice(0, 10),
    });
  }
}

/** Every key's ids, blocks joined. */
async function storedSets(db: Db): Promise<Map<string, number[]>> {
  const rows: { k: Buffer; block: number; bits: Buffer }[] = await db(setTables('posts').sets)
    .select('k', 'block', 'bits')
    .orderBy(['k', 'block']);
  const sets = new Map<string, number[]>();
  for (const r of rows) {
    const key = Buffer.from(r.k).toString();
    sets.set(key, [...(sets.get(key) ?? []), ...RoaringBitmap32.deserialize(Buffer.from(r.bits), 'portable').toArray()]);
  }
  return sets;
}

/**
 * After the crash, with nothing pending: search answers from the sets alone and equals the scan,
 * and the sets are those indexing every record anew (with the same pairable words) makes.
 */
async function expectSetsExact(db: Db): Promise<void> {
  await indexPending(db, 'posts', spec.searchFields);
  expect(await pendingCount(db, 'posts')).toBe(0);
  for (const search of SEARCHES) {
    const terms = parseSearch(search);
    const stats = {} as MatchStats;
    const ids = await db.transaction((trx) => matchingIds(trx, 'posts', spec.searchFields, terms, { stats }));
    expect({ search, ids: ids.toArray(), pending: stats.pending }).toEqual({
      search,
      ids: (await scannedIds(db, 'posts', spec.searchFields, terms)).sort((a, b) => a - b),
      pending: 0,
    });
  }
  await expectSearchEqualsScan(db);

  const after = await storedSets(db);
  const pairable = [...(await readPairable(db, 'posts'))];
  await db.transaction(async (trx) => {
    await emptySetTables(trx, 'posts');
    await trx.raw('INSERT INTO ?? (id, indexed) SELECT id, 0 FROM ??', [pendingTable('posts'), 'posts']);
    await setPairable(trx, 'posts', pairable);
  });
  await indexPending(db, 'posts', spec.searchFields);
  const rebuilt = await storedSets(db);
  expect([...after.keys()].some((k) => k.startsWith('p'))).toBe(true);
  expect(Object.fromEntries(after)).toEqual(Object.fromEntries(rebuilt));
}

(dialect === 'sqlite' ? describe : describe.skip)('search index after a crash of the writer', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  test('kill -9 mid-writes, reopen: search equals the scan, and the sets a rebuild', async () => {
    const filename = (database.config as { filename: string }).filename;
    await preload(database.db);
    for (let round = 0; round < 3; round++) {
      const writer = startWriter(filename);
      await writer.ready;
      // The writer's own indexer gets no turn between its writes (better-sqlite3 answers at
      // once, so its timers never fire): another process's batches are killed instead.
      const indexer = startIndexer(filename);
      await indexer.indexed;
      await sleep(100 + 150 * round);
      await Promise.all([writer.kill(), indexer.kill()]);
    }
    // Some of the writer's records are in the sets, others pending: search reads both.
    const writes = database.db('posts').where('id', '>', 1200);
    const indexed = await writes
      .clone()
      .whereNotIn('id', database.db(pendingTable('posts')).select('id'))
      .count({ n: '*' });
    expect(Number(indexed[0].n)).toBeGreaterThan(0);
    await expectSearchEqualsScan(database.db);
    await expectSetsExact(database.db);
  }, 120000);
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

  test('kill -9 of mariadbd mid-writes, restart: search equals the scan, and the sets a rebuild', async () => {
    const url = mariadb.url(`records_test_crash_${randomBytes(4).toString('hex')}`);
    const config = parseDatabaseUrl(url);
    await ensureMysqlDatabase(config);
    await migrateDatabase(config);
    const loader = openDb(config);
    await preload(loader);
    await loader.destroy();
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
    await expectSearchEqualsScan(db);
    await expectSetsExact(db);
  }, 180000);

  // Ids are the sets' members: an id handed out again after a crash (InnoDB's FULLTEXT doc ids
  // were) would find a deleted record's words, or lose the new record's.
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
    await indexPending(before, 'posts', spec.searchFields);
    await before.destroy();
    await mariadb.stop('SIGKILL');
    await mariadb.start();
    before = openDb(config);
    for (let n = 6; n < 9; n++) ids.push(Number((await insertRecord(before, 'posts', post(n))).id));
    await indexPending(before, 'posts', spec.searchFields);
    await before.destroy();
    await db?.destroy();
    db = openDb(config);
    const terms = parseSearch('zanzibar');
    const found = await listRecords(db, spec, { terms, filters: [], order, page: 1, pageSize: 10 }, createSearch());
    expect(await pendingCount(db, 'posts')).toBe(0);
    expect('rows' in found ? found.rows.map((r) => Number(r.id)).sort((a, b) => a - b) : []).toEqual([...ids.slice(0, 3), ...ids.slice(6)]);
  }, 60000);
});

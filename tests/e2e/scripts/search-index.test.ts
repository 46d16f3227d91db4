import { migrate } from '../../../src/schema';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../scripts/lib/ports';
import { collections } from '../../../src/collections';
import { type Db, ensureMysqlDatabase, openDb } from '../../../src/db/connection';
import { dbTimestamp } from '../../../src/db/time';
import { matchingIds, type MatchStats } from '../../../src/search/sets/matches';
import { readPairable, setTables } from '../../../src/search/sets/store';
import type { DatabaseConfig } from '../../../src/config';
import { dialect, dropTestDatabase, freshConfig } from '../../helpers/db';
import { pendingCount, scannedIds } from '../../helpers/scan';
import { databaseUrl } from '../../helpers/service';

// `npm run search-index`: a failure is one line on stderr (no stack trace) naming the database,
// and exit 1, as for import and export. It indexes records that are there: a database that is
// not is reported, and nothing is created. It indexes what writes left pending; --rebuild makes
// the sets again from the records.
const setUp = 'check DATABASE_URL, or create it by starting the service or running npm run import or npm run seed';

function run(url: string, args: string[] = []) {
  const { status, stdout, stderr } = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/search-index.ts', ...args], {
    cwd: join(__dirname, '../../..'),
    env: { ...process.env, DATABASE_URL: url },
    encoding: 'utf8',
  });
  return { status, stdout, stderr };
}

type Mysql = Extract<DatabaseConfig, { client: 'mysql' }>;
const where = (c: Mysql) => `MySQL ${c.host}:${c.port}/${c.database}`;

test('a MySQL server that refuses connections: one line on stderr, exit 1', async () => {
  const port = await freePort();
  expect(run(`mysql://root@127.0.0.1:${port}/records`)).toEqual({
    status: 1,
    stdout: '',
    stderr: `search-index failed: cannot reach the database (MySQL 127.0.0.1:${port}/records): connect ECONNREFUSED 127.0.0.1:${port}\n`,
  });
}, 30_000);

test('a SQLite file that does not exist: nothing to do, and no file is made', () => {
  const dir = mkdtempSync(join(tmpdir(), 'records-search-index-'));
  try {
    const filename = join(dir, 'new', 'records.sqlite3');
    expect(run(`sqlite:${filename}`)).toEqual({ status: 0, stdout: 'No SQLite file: nothing to do\n', stderr: '' });
    expect(existsSync(join(dir, 'new'))).toBe(false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);

test('an unknown --collection: one line on stderr, exit 1', () => {
  expect(run('sqlite:/nonexistent/records.sqlite3', ['--collection', 'nope'])).toEqual({
    status: 1,
    stdout: '',
    stderr: `search-index failed: --collection must be one of ${collections.map((c) => c.name).join(', ')}\n`,
  });
}, 30_000);

describe('on a database with records', () => {
  let config: DatabaseConfig;
  let db: Db;
  beforeEach(async () => {
    config = freshConfig();
    await ensureMysqlDatabase(config);
    db = openDb(config);
    await migrate(db);
  });
  afterEach(() => dropTestDatabase(config, db));

  const at = dbTimestamp();
  const post = (title: string, content = 'x') => ({ title, content, author: 'a', created_at: at, updated_at: at });
  const fields = ['title', 'content'];
  /** The ids of a search as matchingIds answers it, and how. */
  const search = (terms: string[]) =>
    db.transaction(async (trx) => {
      const stats = {} as MatchStats;
      const ids = (await matchingIds(trx, 'posts', fields, terms, { stats })).toArray();
      return { ids, stats };
    });
  const scanned = async (terms: string[]) => (await scannedIds(db, 'posts', fields, terms)).sort((a, b) => a - b);
  const keys = async () => (await db(setTables('posts').sets).distinct<{ k: Buffer }[]>('k')).map((r) => Buffer.from(r.k).toString());

  test('indexes what the writes left pending, every table named; a second run finds nothing', async () => {
    const [kept] = await db('posts').insert(post('kept quokkaword'), 'id');
    const [gone] = await db('posts').insert(post('gone wombatword'), 'id');
    const keptId = Number(typeof kept === 'object' ? kept.id : kept);
    await db('posts')
      .where({ id: typeof gone === 'object' ? gone.id : gone })
      .delete();
    expect(await pendingCount(db, 'posts')).toBe(2);

    const result = run(databaseUrl(config));
    // Progress on stderr, for the tables that had records to index.
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: 'posts: indexed 2\n' });
    const lines = result.stdout.trim().split('\n');
    expect(lines.map((l) => l.split(':')[0])).toEqual(collections.map((c) => c.name));
    expect(lines[collections.findIndex((c) => c.name === 'posts')]).toMatch(/^posts: 2 records indexed, [\d.]+ s$/);
    for (const line of lines.filter((l) => !l.startsWith('posts:'))) expect(line).toMatch(/^\w+: 0 records indexed, [\d.]+ s$/);

    expect(await pendingCount(db, 'posts')).toBe(0);
    // The kept record is in the sets; the one deleted before it was indexed never got there.
    expect(await keys()).toEqual(expect.arrayContaining(['wquokkaword', 'wkept']));
    expect((await keys()).filter((k) => k.includes('wombat'))).toEqual([]);
    expect(await search(['quokkaword'])).toEqual({ ids: [keptId], stats: { sure: 1, checked: 0, pending: 0 } });
    expect(await search(['wombatword'])).toEqual({ ids: [], stats: { sure: 0, checked: 0, pending: 0 } });

    const again = run(databaseUrl(config), ['--collection', 'posts']);
    expect(again).toMatchObject({ status: 0, stderr: '' });
    expect(again.stdout).toMatch(/^posts: 0 records indexed, [\d.]+ s\n$/);
  }, 60_000);

  // 1,200 records, enough for the pairable words to be chosen (5% of a sample of at least 1,000).
  test('--rebuild --collection posts: the sets made again from the records, the words with pairs chosen anew', async () => {
    const rows = Array.from({ length: 1200 }, (_, i) => post(`the cat and the hat ${i}`, i % 2 ? 'odd' : 'even'));
    for (let i = 0; i < rows.length; i += 200) await db('posts').insert(rows.slice(i, i + 200));
    expect(run(databaseUrl(config), ['--collection', 'posts'])).toMatchObject({ status: 0, stderr: 'posts: indexed 1,200\n' });
    const all = await scanned(['cat']);
    expect(all).toHaveLength(1200);
    expect(await search(['cat'])).toEqual({ ids: all, stats: { sure: 1200, checked: 0, pending: 0 } });
    // Indexing what is pending chooses no pairs: a phrase across words is checked row by row.
    expect((await search(['cat and'])).stats).toEqual({ sure: 0, checked: 1200, pending: 0 });

    // Sets that lie (emptied behind the indexer's back): search misses what they miss...
    await db(setTables('posts').sets).delete();
    expect((await search(['cat'])).ids).toEqual([]);

    // ... until a rebuild makes them again, one line for the one table named.
    const result = run(databaseUrl(config), ['--rebuild', '--collection', 'posts']);
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: 'posts: indexed 1,200\n' });
    expect(result.stdout).toMatch(/^posts: 1,200 records indexed, 6 words with pairs, [\d.]+ s\n$/);
    expect([...(await readPairable(db, 'posts'))].sort()).toEqual(['and', 'cat', 'even', 'hat', 'odd', 'the']);
    expect(await pendingCount(db, 'posts')).toBe(0);
    expect(await search(['cat'])).toEqual({ ids: all, stats: { sure: 1200, checked: 0, pending: 0 } });
    // The pairs decide a phrase of pairable words without a row...
    expect(await search(['cat and'])).toEqual({ ids: all, stats: { sure: 1200, checked: 0, pending: 0 } });
    expect(await search(['hat odd'])).toEqual({ ids: await scanned(['hat odd']), stats: { sure: 0, checked: 0, pending: 0 } });
    // ... and those with a word not pairable are checked, and exact.
    for (const terms of [['hat 7'], ['at 1'], ['the', '11'], ['and the hat 119'], ['odd', 'hat 9']])
      expect((await search(terms)).ids).toEqual(await scanned(terms));
    expect(await scanned(['hat 7'])).toHaveLength(111);
  }, 120_000);
});

(dialect === 'mysql' ? describe : describe.skip)('on MySQL', () => {
  const schemas = async (c: Mysql) => {
    const admin = openDb({ ...c, database: '' });
    try {
      return (await admin.raw('SELECT COUNT(*) AS n FROM information_schema.schemata WHERE schema_name = ?', [c.database]))[0][0].n;
    } finally {
      await admin.destroy();
    }
  };

  test.each([
    ['a database that does not exist', async (_c: Mysql) => {}, 1, `search-index failed: the database (%s) does not exist; ${setUp}\n`, 0],
    ['an empty database', (c: Mysql) => ensureMysqlDatabase(c), 0, '', 1],
  ])(
    '%s',
    async (_, prepare, status, stderr, after) => {
      const config = freshConfig() as Mysql;
      try {
        await prepare(config);
        const result = run(databaseUrl(config));
        expect({ status: result.status, stderr: result.stderr }).toEqual({ status, stderr: stderr.replace('%s', where(config)) });
        if (status === 0) expect(result.stdout).toMatch(/^posts: 0 records indexed/);
        expect(await schemas(config)).toBe(after);
      } finally {
        await dropTestDatabase(config);
      }
    },
    30_000,
  );
});

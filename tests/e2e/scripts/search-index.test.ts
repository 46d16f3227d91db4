import { migrate } from '../../../src/schema';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../scripts/lib/ports';
import { collections } from '../../../src/collections';
import { ensureMysqlDatabase, openDb } from '../../../src/db/connection';
import { dbTimestamp } from '../../../src/db/time';
import { tokenTables } from '../../../src/search/sqlite/tokens';
import type { DatabaseConfig } from '../../../src/config';
import { dialect, dropTestDatabase, freshConfig } from '../../helpers/db';
import { databaseUrl } from '../../helpers/service';

// `npm run search-index`: a failure is one line on stderr (no stack trace) naming the database,
// and exit 1, as for import and export. It indexes records that are there: a database that is
// not is reported, and nothing is created.
const setUp = 'check DATABASE_URL, or create it by starting the service or running npm run import or npm run seed';

function run(url: string) {
  const { status, stdout, stderr } = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/search-index.ts'], {
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

(dialect === 'sqlite' ? test : test.skip)(
  'SQLite: the tokens no record holds leave the vocabulary, every table named',
  async () => {
    const config = freshConfig() as Extract<DatabaseConfig, { client: 'sqlite' }>;
    const db = openDb(config);
    try {
      await migrate(db);
      const at = dbTimestamp();
      const post = (title: string) => ({ title, content: 'x', author: 'a', created_at: at, updated_at: at });
      await db('posts').insert(post('kept quokkaword'));
      const [gone] = await db('posts').insert(post('gone wombatword'));
      await db('posts').where({ id: gone }).delete();
      const { vocab } = tokenTables('posts');
      const has = async (term: string) => (await db(vocab).where({ term }).first()) !== undefined;
      expect(await has('wombatword')).toBe(true);
      await db.destroy();

      const result = run(`sqlite:${config.filename}`);
      expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
      const lines = result.stdout.trim().split('\n');
      expect(lines.map((l) => l.split(':')[0])).toEqual(collections.map((c) => c.name));
      expect(lines[collections.findIndex((c) => c.name === 'posts')]).toMatch(
        /^posts: 2 tokens no record holds taken out of the vocabulary, [\d.]+ s$/,
      );
      const after = openDb(config);
      try {
        expect(await after(vocab).where({ term: 'wombatword' }).first()).toBeUndefined();
        expect(await after(vocab).where({ term: 'quokkaword' }).first()).toBeDefined();
      } finally {
        await after.destroy();
      }
    } finally {
      await dropTestDatabase(config, db);
    }
  },
  30_000,
);

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

import { spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import type { DatabaseConfig } from '../../../src/config';
import BetterSqlite3 from 'better-sqlite3';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { exportCollection, ExportError, type ExportFormat } from '../../../scripts/export/index';
import { importFile } from '../../../scripts/import/index';
import { freePort } from '../../../scripts/lib/ports';
import { ensureMysqlDatabase } from '../../../src/db/connection';
import { createTestDatabase, dialect, dropTestDatabase, freshConfig } from '../../helpers/db';
import { startTestApp, type TestApp } from '../../helpers/app';
import { fixtures } from '../../helpers/fixtures';

// `npm run export`: every record as NDJSON, one a line, with its write fields and timestamps
// (the format `npm run import` reads), oldest id first.
let app: TestApp;
const created: Record<string, Record<string, unknown>[]> = {};
beforeAll(async () => {
  app = await startTestApp();
  for (const f of fixtures) {
    created[f.name] = [];
    for (let n = 1; n <= 3; n++) {
      const res = await app.request('POST', `/api/${f.name}/`, { body: f.valid(n) });
      created[f.name].push(res.body);
    }
  }
  const odd = await app.request('POST', '/api/posts/', {
    body: { title: 'line\nbreak "quoted", ÉCOLE 😀', content: 'tab\there\r\n', author: 'ada' },
  });
  created.posts.push(odd.body);
});
afterAll(() => app.close());

const withoutId = ({ id: _id, ...rest }: Record<string, unknown>) => rest;

async function exported(name: string, format: ExportFormat = 'ndjson', db = app.database.db): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await exportCollection(db, name, out, format);
  return Buffer.concat(chunks).toString('utf8');
}

test.each(fixtures.map((f) => f.name))('%s: one line per record, write fields and timestamps, oldest first', async (name) => {
  const text = await exported(name);
  expect(text.endsWith('\n')).toBe(true);
  const lines = text
    .slice(0, -1)
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(lines).toEqual(created[name].map(withoutId));
});

test('an unknown collection is an error naming the known ones', async () => {
  await expect(exportCollection(app.database.db, 'nope', new PassThrough())).rejects.toThrow(ExportError);
});

function databaseUrl(config: DatabaseConfig): string {
  if (config.client === 'sqlite') return `sqlite:${config.filename}`;
  return `mysql://${encodeURIComponent(config.user)}:${encodeURIComponent(config.password)}@${config.host}:${config.port}/${config.database}`;
}

test.each([
  ['ndjson', []],
  ['csv', ['--format', 'csv']],
] as const)(
  'the command writes the same lines (%s) to stdout and a count to stderr',
  async (format, args) => {
    const run = spawnSync('npx', ['tsx', 'scripts/export.ts', '--collection', 'posts', ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl(app.database.config) },
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(await exported('posts', format));
    expect(run.stderr).toMatch(/exported 4 posts in/);
  },
  30_000,
);

// Export, then import into an empty database, then export again: the same records, byte for byte
// (write fields and both timestamps survive the trip).
test.each(fixtures.map((f) => f.name))('%s: export then import into an empty database round-trips exactly', async (name) => {
  const text = await exported(name);
  const file = join(mkdtempSync(join(tmpdir(), 'records-roundtrip-')), `${name}.jsonl`);
  writeFileSync(file, text);
  const empty = await createTestDatabase();
  try {
    expect(await importFile(empty.db, name, file)).toBe(created[name].length);
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await exportCollection(empty.db, name, out);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(text);
  } finally {
    await empty.drop();
  }
});

// --format csv: the HTTP export's CSV in id order, which the import reads back to the same bytes.
test.each(fixtures.map((f) => f.name))('%s: CSV is what the HTTP export answers, and round-trips exactly', async (name) => {
  const text = await exported(name, 'csv');
  const http = await app.request('GET', `/api/${name}/export/?ordering=id`, { headers: { accept: 'text/csv' } });
  expect(http.status).toBe(200);
  expect(text).toBe(http.body);
  const file = join(mkdtempSync(join(tmpdir(), 'records-roundtrip-')), `${name}.csv`);
  writeFileSync(file, text);
  const empty = await createTestDatabase();
  try {
    expect(await importFile(empty.db, name, file)).toBe(created[name].length);
    expect(await exported(name, 'csv', empty.db)).toBe(text);
  } finally {
    await empty.drop();
  }
});

// An export only reads: against a database that was never set up, or that it cannot reach, it
// says so in one line on stderr (no stack trace), exits 1, and creates nothing.
const setUp = 'check DATABASE_URL, or create it by starting the service or running npm run import or npm run seed';

function exportFrom(config: DatabaseConfig): { status: number | null; stdout: string; stderr: string } {
  const { status, stdout, stderr } = spawnSync('npx', ['tsx', 'scripts/export.ts', '--collection', 'posts'], {
    env: { ...process.env, DATABASE_URL: databaseUrl(config) },
    encoding: 'utf8',
  });
  return { status, stdout, stderr };
}

function writeLines(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'records-export-')), 'lines.jsonl');
  writeFileSync(file, text);
  return file;
}

type Sqlite = Extract<DatabaseConfig, { client: 'sqlite' }>;
type Mysql = Extract<DatabaseConfig, { client: 'mysql' }>;

(dialect === 'sqlite' ? describe : describe.skip)('the command, against a SQLite file it cannot export from', () => {
  /** The folder's files and their bytes: an export leaves them as they were, and adds none (no -wal or -shm). */
  const snapshot = (dir: string) =>
    existsSync(dir) ? Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f)).toString('hex')])) : undefined;

  test.each([
    [
      'that does not exist, in a folder that does not',
      (c: Sqlite) => ({ ...c, filename: join(dirname(c.filename), 'new', 'records.sqlite3') }),
      'does not exist',
    ],
    [
      'with no tables',
      (c: Sqlite) => {
        writeFileSync(c.filename, '');
        return c;
      },
      'has no posts table',
    ],
    [
      'with no tables, in rollback mode',
      (c: Sqlite) => {
        new BetterSqlite3(c.filename).exec('CREATE TABLE other (id INTEGER)').close();
        return c;
      },
      'has no posts table',
    ],
    [
      'with no tables, in WAL mode',
      (c: Sqlite) => {
        const db = new BetterSqlite3(c.filename);
        db.pragma('journal_mode = WAL');
        db.exec('CREATE TABLE other (id INTEGER)');
        db.close();
        return c;
      },
      'has no posts table',
    ],
  ])(
    'a file %s: says so, and leaves the folder as it was',
    (_, prepare, says) => {
      const fresh = freshConfig() as Sqlite;
      const config = prepare(fresh);
      const before = snapshot(dirname(config.filename));
      try {
        expect(exportFrom(config)).toEqual({
          status: 1,
          stdout: '',
          stderr: `export failed: the database (SQLite file ${config.filename}) ${says}; ${setUp}\n`,
        });
        expect(snapshot(dirname(config.filename))).toEqual(before);
      } finally {
        rmSync(dirname(fresh.filename), { recursive: true, force: true });
      }
    },
    30_000,
  );

  test('a WAL database that nothing has open: exported, and its folder left as it was (no -wal or -shm)', async () => {
    const t = await createTestDatabase();
    const config = t.config as Sqlite;
    const file = writeLines(await exported('posts'));
    try {
      await importFile(t.db, 'posts', file);
      await t.db.destroy();
      const before = snapshot(dirname(config.filename));
      expect(Object.keys(before!)).toEqual([basename(config.filename)]);
      const result = exportFrom(config);
      expect(result.status).toBe(0);
      expect(result.stdout).toBe(await exported('posts'));
      expect(snapshot(dirname(config.filename))).toEqual(before);
    } finally {
      rmSync(dirname(file), { recursive: true, force: true });
      await t.drop();
    }
  }, 30_000);
  test('a reader that goes away (`| head`): exit 0, quietly, and no -wal or -shm left', async () => {
    const t = await createTestDatabase();
    const config = t.config as Sqlite;
    // More than a pipe holds, so that the export is still writing when the reader goes.
    const body = 'x'.repeat(500);
    const file = writeLines(Array.from({ length: 20_000 }, (_, n) => `{"title":"t${n}","content":"${body}","author":"a"}\n`).join(''));
    try {
      await importFile(t.db, 'posts', file);
      await t.db.destroy();
      const before = snapshot(dirname(config.filename));
      const run = spawnSync(
        'bash',
        ['-c', 'npx tsx scripts/export.ts --collection posts | head -n 1 > /dev/null; exit "${PIPESTATUS[0]}"'],
        {
          env: { ...process.env, DATABASE_URL: `sqlite:${config.filename}` },
          encoding: 'utf8',
        },
      );
      expect([run.status, run.stderr]).toEqual([0, '']);
      expect(snapshot(dirname(config.filename))).toEqual(before);
    } finally {
      rmSync(dirname(file), { recursive: true, force: true });
      await t.drop();
    }
  }, 60_000);
});

(dialect === 'mysql' ? describe : describe.skip)('the command, against a MySQL database it cannot export from', () => {
  const schemas = async (c: Mysql) =>
    (await app.database.db.raw('SELECT COUNT(*) AS n FROM information_schema.schemata WHERE schema_name = ?', [c.database]))[0][0].n;
  const tables = async (c: Mysql) =>
    (await app.database.db.raw('SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = ?', [c.database]))[0][0].n;

  test.each([
    ['that does not exist', (c: Mysql) => Promise.resolve(c), 'does not exist', { schemas: 0, tables: 0 }],
    [
      'with no tables',
      async (c: Mysql) => {
        await ensureMysqlDatabase(c);
        return c;
      },
      'has no posts table',
      { schemas: 1, tables: 0 },
    ],
  ])(
    'a database %s',
    async (_, prepare, says, after) => {
      const config = await prepare(freshConfig() as Mysql);
      try {
        expect(exportFrom(config)).toEqual({
          status: 1,
          stdout: '',
          stderr: `export failed: the database (MySQL ${config.host}:${config.port}/${config.database}) ${says}; ${setUp}\n`,
        });
        expect({ schemas: await schemas(config), tables: await tables(config) }).toEqual(after);
      } finally {
        await dropTestDatabase(config);
      }
    },
    30_000,
  );

  test('a server that refuses connections', async () => {
    const config = { ...(freshConfig() as Mysql), port: await freePort() };
    const where = `MySQL ${config.host}:${config.port}/${config.database}`;
    expect(exportFrom(config)).toEqual({
      status: 1,
      stdout: '',
      stderr: `export failed: cannot reach the database (${where}): connect ECONNREFUSED ${config.host}:${config.port}\n`,
    });
  }, 30_000);
});

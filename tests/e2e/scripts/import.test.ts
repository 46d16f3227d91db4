import { listRecords } from '../../../src/handlers/pages';
import BetterSqlite3 from 'better-sqlite3';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { writeCorpus } from '../../../scripts/bench/corpus-file';
import { ImportError, importFile } from '../../../scripts/import/index';
import { writeRows } from '../../../scripts/import/write';
import { connectionPool, type MysqlConnection, run } from '../../../scripts/lib/pool';
import { LineTooLong, utf8Lines } from '../../../scripts/import/lines';
import type { DatabaseConfig } from '../../../src/config';
import { type Db, openDb } from '../../../src/db/connection';
import { countAll } from '../../../src/db/counts';
import { createSearch, parseSearch } from '../../../src/search';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createTestDatabase, dialect, dropTestDatabase, freshConfig } from '../../helpers/db';
import { fixtures } from '../../helpers/fixtures';
import { NEWEST_FIRST as order, pendingCount } from '../../helpers/scan';
import { databaseUrl } from '../../helpers/service';

let app: TestApp;
let dir: string;
beforeAll(async () => {
  app = await startTestApp();
  dir = mkdtempSync(join(tmpdir(), 'records-import-'));
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

let files = 0;
function ndjson(records: unknown[], raw: string[] = []): string {
  const file = join(dir, `${++files}.jsonl`);
  writeFileSync(file, [...records.map((r) => JSON.stringify(r)), ...raw].join('\n') + '\n');
  return file;
}

async function all(name: string): Promise<any[]> {
  const res = await app.request('GET', `/api/${name}/?page_size=${name === 'posts' ? 10 : 100}`);
  expect(res.status).toBe(200);
  return res.body.results;
}

let serial = 5000;
describe.each(fixtures.map((f) => [f.name, f] as const))('%s', (name, f) => {
  test('imports every line, keeps given timestamps, counts and search see the rows', async () => {
    const before = (await app.request('GET', `/api/${name}/`)).body.count;
    const [a, b, c, d] = [f.valid(++serial), f.valid(++serial), f.valid(++serial), f.valid(++serial)];
    const file = ndjson([
      { ...a, created_at: '2020-01-02T03:04:05.678Z' },
      { ...b, created_at: '2021-06-01T12:00:00+02:00', updated_at: '2022-01-01T00:00:00.000Z' },
      { ...c, id: 999999 },
      { ...d, updated_at: '2019-05-06T07:08:09.000Z' },
    ]);
    expect(await importFile(app.database.db, name, file)).toBe(4);

    const after = await app.request('GET', `/api/${name}/`);
    expect(after.body.count).toBe(before + 4);
    const rows = await all(name);
    const byText = (v: Record<string, unknown>) => rows.find((r) => r[f.searchFields[0]] === v[f.searchFields[0]]);
    expect(byText(a)).toMatchObject({
      ...f.defaults,
      ...a,
      created_at: '2020-01-02T03:04:05.678Z',
      updated_at: '2020-01-02T03:04:05.678Z',
    });
    expect(byText(b)).toMatchObject({ created_at: '2021-06-01T10:00:00.000Z', updated_at: '2022-01-01T00:00:00.000Z' });
    // Only updated_at given: created no later than that, never after it.
    expect(byText(d)).toMatchObject({ created_at: '2019-05-06T07:08:09.000Z', updated_at: '2019-05-06T07:08:09.000Z' });
    // An id in the file is read-only, as in a request body: the database gives one.
    expect(byText(c).id).not.toBe(999999);

    const term = String(a[f.searchFields[0]]);
    const found = await app.request('GET', `/api/${name}/?search=${encodeURIComponent(term)}`);
    expect(found.body.results.map((r: any) => r.id)).toContain(byText(a).id);
    expect(await pendingCount(app.database.db, name)).toBe(0);

    // Writes after an import are listed pending by their triggers as ever, and found.
    const later = (await app.request('POST', `/api/${name}/`, { body: f.valid(++serial) })).body;
    expect(await pendingCount(app.database.db, name)).toBe(1);
    const again = await app.request('GET', `/api/${name}/?search=${encodeURIComponent(later[f.searchFields[0]])}`);
    expect(again.body.results.map((r: any) => r.id)).toContain(later.id);
  });

  const bad: [string, { line: (v: Record<string, unknown>) => string; want: RegExp }][] = [
    [
      'a missing required field',
      {
        line: (v) => JSON.stringify({ ...v, [f.searchFields[0]]: undefined }),
        want: new RegExp(`line 2: ${f.searchFields[0]}: is required`),
      },
    ],
    ['an unknown field', { line: (v) => JSON.stringify({ ...v, colour: 'red' }), want: /line 2: colour: is not a field of this resource/ }],
    [
      'a field of the wrong type',
      { line: (v) => JSON.stringify({ ...v, [f.searchFields[0]]: 5 }), want: new RegExp(`line 2: ${f.searchFields[0]}: must be string`) },
    ],
    [
      'text holding NUL',
      {
        line: (v) => JSON.stringify({ ...v, [f.searchFields[0]]: 'a\u0000b' }),
        want: new RegExp(`line 2: ${f.searchFields[0]}: must not contain`),
      },
    ],
    [
      'a bad created_at',
      { line: (v) => JSON.stringify({ ...v, created_at: 'yesterday' }), want: /line 2: created_at: must be an RFC 3339/ },
    ],
    [
      'a created_at past the year 9999 in UTC',
      {
        line: (v) => JSON.stringify({ ...v, created_at: '9999-12-31T23:00:00-05:00' }),
        want: /line 2: created_at: must fall in the years 0000 to 9999/,
      },
    ],
    [
      'an updated_at before the year 0000 in UTC',
      {
        line: (v) => JSON.stringify({ ...v, updated_at: '0000-01-01T00:00:00+01:00' }),
        want: /line 2: updated_at: must fall in the years 0000 to 9999/,
      },
    ],
    [
      'updated_at before created_at',
      {
        line: (v) => JSON.stringify({ ...v, created_at: '2022-01-01T00:00:00Z', updated_at: '2021-01-01T00:00:00Z' }),
        want: /line 2: updated_at: must not be before/,
      },
    ],
    ['a line that is not JSON', { line: () => '{"title": ', want: /line 2: line: is not JSON/ }],
  ];
  test.each(bad)('one bad line (%s) stops the import with its line and field; nothing is written', async (_n, { line, want }) => {
    const before = await all(name);
    const count = (await app.request('GET', `/api/${name}/`)).body.count;
    const file = ndjson([f.valid(++serial)], [line(f.valid(++serial)), JSON.stringify(f.valid(++serial))]);
    await expect(importFile(app.database.db, name, file)).rejects.toThrow(want);
    await expect(importFile(app.database.db, name, file)).rejects.toBeInstanceOf(ImportError);
    expect((await app.request('GET', `/api/${name}/`)).body.count).toBe(count);
    expect(await all(name)).toEqual(before);
  });

  if (f.uniqueFields.length) {
    test.each(f.uniqueFields.map((u) => [u] as const))(
      'a %s repeated in the file, or taken by a record, stops the import',
      async (field) => {
        const count = (await app.request('GET', `/api/${name}/`)).body.count;
        const first = f.valid(++serial);
        const again = { ...f.valid(++serial), [field]: first[field] };
        await expect(importFile(app.database.db, name, ndjson([first, again]))).rejects.toThrow(
          new RegExp(`line 2: ${field}: must be unique`),
        );
        const existing = (await app.request('POST', `/api/${name}/`, { body: f.valid(++serial) })).body;
        const taken = { ...f.valid(++serial), [field]: field === 'email' ? String(existing[field]).toUpperCase() : existing[field] };
        await expect(importFile(app.database.db, name, ndjson([f.valid(++serial), taken]))).rejects.toThrow(
          new RegExp(`line 2: ${field}: must be unique`),
        );
        expect((await app.request('GET', `/api/${name}/`)).body.count).toBe(count + 1);
      },
    );
  }
});

test('an unknown collection is refused', async () => {
  await expect(importFile(app.database.db, 'widgets', ndjson([]))).rejects.toThrow(/--collection must be one of/);
});

// A file's bytes as they are: a stream's 'utf8' encoding would read those that are not UTF-8 as
// U+FFFD and store that, where the HTTP API refuses such a body.
describe('bytes that are not UTF-8', () => {
  const record = (title: string, content = 'c') => JSON.stringify({ title, content, author: 'bytes' });
  /** A line whose title holds these bytes (hex) as they are. */
  const holding = (hex: string) =>
    Buffer.concat([Buffer.from('{"title": "bad '), Buffer.from(hex, 'hex'), Buffer.from('", "content": "c"}')]);
  /** The parts, line ends and all, as they are. */
  const bytes = (parts: (string | Buffer)[]) => {
    const name = join(dir, `${++files}.jsonl`);
    writeFileSync(name, Buffer.concat(parts.map((p) => Buffer.from(p))));
    return name;
  };
  const lines = (all: (string | Buffer)[]) => bytes(all.flatMap((l) => [l, '\n']));
  const stored = async () => Number((await app.database.db('posts').where({ author: 'bytes' }).count({ n: '*' }))[0].n);

  test.each([
    ['FF FE', 'fffe'],
    ['a lone continuation byte', '80'],
    ['a character cut short (E2 82 of €)', 'e282'],
    ['an overlong encoding (C0 AF)', 'c0af'],
    ['an encoded surrogate (ED A0 80)', 'eda080'],
    ['a code point past U+10FFFF (F4 90 80 80)', 'f4908080'],
  ])('a line holding %s stops the import with its line number; nothing is written', async (_, hex) => {
    const before = await stored();
    const file = lines([record('utf8 a'), holding(hex), record('utf8 b')]);
    await expect(importFile(app.database.db, 'posts', file)).rejects.toThrow(
      new ImportError('line 2: line: is not valid UTF-8; nothing was imported'),
    );
    expect(await stored()).toBe(before);
  });

  const many = Array.from({ length: 3000 }, (_, i) => [record(`utf8 ${i}`), '\n']).flat();
  test.each([
    ['past the first chunk read, after a blank line', [...many, '\n', holding('ff'), '\n'], 3002],
    ['with \\r\\n line ends', [record('utf8 a'), '\r\n', record('utf8 b'), '\r\n', holding('ff'), '\r\n'], 3],
    // readline, which read the lines before, ends a line at a lone \r too.
    ['after a line ended by a lone \\r', [record('utf8 a'), '\r', record('utf8 b'), '\n', holding('ff'), '\n'], 3],
    ['in the last line, with no line end', [record('utf8 a'), '\n', holding('ff')], 2],
    [
      'past the first chunk read, in a file whose lines end in a lone \\r',
      [...many.map((p) => (p === '\n' ? '\r' : p)), holding('ff'), '\r'],
      3001,
    ],
    ['past the first chunk read, with \\r\\n line ends', [...many.map((p) => (p === '\n' ? '\r\n' : p)), holding('ff'), '\r\n'], 3001],
  ])('the line is numbered as every line is: %s', async (_, parts, n) => {
    await expect(importFile(app.database.db, 'posts', bytes(parts))).rejects.toThrow(
      new ImportError(`line ${n}: line: is not valid UTF-8; nothing was imported`),
    );
  });

  test('a line that is bad otherwise, before the one that is not UTF-8, is the one reported', async () => {
    await expect(importFile(app.database.db, 'posts', lines([record('utf8 a'), '{"title": ', holding('ff')]))).rejects.toThrow(
      /^line 2: line: is not JSON/,
    );
  });

  test('U+FFFD as UTF-8 (EF BF BD) or as \\ufffd, and characters that chunks of the file end inside, are imported as they are', async () => {
    const before = await stored();
    const wide = 'é€😀'.repeat(20);
    const file = lines([
      Buffer.concat([Buffer.from('{"title": "raw '), Buffer.from('efbfbd', 'hex'), Buffer.from('", "content": "c", "author": "bytes"}')]),
      '{"title": "escaped \\ufffd", "content": "c", "author": "bytes"}',
      // 3,000 lines of 2-, 3- and 4-byte characters: the chunks read end inside some of them.
      ...Array.from({ length: 3000 }, (_, i) => record(`wide ${i}`, `${wide} ${i}`)),
    ]);
    expect(await importFile(app.database.db, 'posts', file)).toBe(3002);
    expect(await stored()).toBe(before + 3002);
    const titles = await app.database
      .db('posts')
      .where({ author: 'bytes' })
      .whereIn('title', ['raw \ufffd', 'escaped \ufffd'])
      .pluck('title');
    expect(titles.sort()).toEqual(['escaped \ufffd', 'raw \ufffd']);
    const contents = await app.database.db('posts').where({ author: 'bytes' }).where('title', 'like', 'wide %').pluck('content');
    expect(new Set(contents)).toEqual(new Set(Array.from({ length: 3000 }, (_, i) => `${wide} ${i}`)));
  });

  // As before: the mark is read as part of the first line, which is then no JSON.
  test('a byte order mark at the start stops the import at line 1', async () => {
    await expect(importFile(app.database.db, 'posts', lines(['\ufeff' + record('utf8 bom')]))).rejects.toThrow(
      /^line 1: line: is not JSON/,
    );
  });
});

// A line over the most bytes a record may have (the command passes BODY_LIMIT) stops the import
// with its number: a file that is one JSON array, with no line end, is not read whole.
describe('a line over the limit', () => {
  const record = (title: string) => JSON.stringify({ title, content: 'c', author: 'limit' });
  const limit = record('x'.repeat(100)).length;
  const file = (parts: string[]) => {
    const name = join(dir, `${++files}.jsonl`);
    writeFileSync(name, parts.join(''));
    return name;
  };
  const stored = async () => Number((await app.database.db('posts').where({ author: 'limit' }).count({ n: '*' }))[0].n);

  test.each([
    ['within a chunk', [record('a'), '\n', record('x'.repeat(101)), '\n', record('b'), '\n'], 2],
    ['after a blank line, counted as every line is', [record('a'), '\r\n\r\n', record('é'.repeat(51)), '\r\n'], 3],
    ['a JSON array with no line end', [`[${Array.from({ length: 3000 }, (_, i) => record(`a ${i}`)).join(',')}]`], 1],
    ['running past several chunks after whole lines', [record('a'), '\n', record('b'), '\n', 'x'.repeat(300_000)], 3],
  ])('%s', async (_, parts, n) => {
    const before = await stored();
    await expect(importFile(app.database.db, 'posts', file(parts), { maxLineBytes: limit })).rejects.toThrow(
      new ImportError(
        `line ${n}: line: is over ${limit} bytes, the largest record the API takes (BODY_LIMIT); ` +
          'the file must hold one JSON record a line; nothing was imported',
      ),
    );
    expect(await stored()).toBe(before);
  });

  test('a line of exactly the limit is imported', async () => {
    const before = await stored();
    expect(await importFile(app.database.db, 'posts', file([record('x'.repeat(100)), '\n']), { maxLineBytes: limit })).toBe(1);
    expect(await stored()).toBe(before + 1);
  });

  test('the reader gives the lines before a line with no end, then stops once it holds more than the limit', async () => {
    const CHUNK = 64 * 1024;
    const name = file(['a\n', 'b\n', 'x'.repeat(20 * CHUNK)]);
    const got: (string | undefined)[] = [];
    const reading = (async () => {
      for await (const batch of utf8Lines(name, 2 * CHUNK)) got.push(...batch);
    })();
    await expect(reading).rejects.toBeInstanceOf(LineTooLong);
    expect(got).toEqual(['a', 'b']);
  });
});

// The lines as readline gave them (\n, \r\n and a lone \r all end one), read a chunk (64 KiB) at
// a time whatever the line ends: a file of old Mac line ends (\r only) is not held whole.
describe('reading the lines', () => {
  const CHUNK = 64 * 1024;
  const read = async (parts: string[]) => {
    const file = join(dir, `${++files}.jsonl`);
    writeFileSync(file, parts.join(''));
    const batches: (string | undefined)[][] = [];
    for await (const batch of utf8Lines(file)) batches.push(batch);
    return batches;
  };
  const lines = Array.from({ length: 5000 }, (_, i) => `{"n": ${i}, "text": "${'é'.repeat(i % 50)}"}`);

  test.each([
    ['\\n', '\n'],
    ['\\r\\n', '\r\n'],
    ['a lone \\r', '\r'],
  ])('lines ended by %s: every line, in batches of about a chunk', async (_, end) => {
    const batches = await read(lines.map((l) => l + end));
    expect(batches.flat()).toEqual(lines);
    expect(batches.length).toBeGreaterThan(4);
    for (const batch of batches) expect(Buffer.byteLength(batch.join(end))).toBeLessThan(CHUNK + 200);
  });

  test.each([
    [
      "\\r\\n across two chunks (\\r the first one's last byte)",
      ['a'.repeat(CHUNK - 1), '\r\n', 'b', '\r\n'],
      ['a'.repeat(CHUNK - 1), 'b'],
    ],
    ["a lone \\r as a chunk's last byte", ['a'.repeat(CHUNK - 1), '\r', 'b', '\r'], ['a'.repeat(CHUNK - 1), 'b']],
    ["a lone \\r as a chunk's first byte", ['a'.repeat(CHUNK), '\r', 'b', '\r'], ['a'.repeat(CHUNK), 'b']],
    ['\\r\\r\\n: a blank line, then', ['a', '\r\r\n', 'b'], ['a', '', 'b']],
    ['mixed, with no end on the last line', ['a\n', 'b\r\n', 'c\r', 'd'], ['a', 'b', 'c', 'd']],
  ])('%s', async (_, parts, want) => {
    expect((await read(parts)).flat()).toEqual(want);
  });
});

// The command: a failure is one line on stderr (no stack trace) and exit 1. An import creates the
// database it is given when there is none (its folder too, on SQLite), but not for a --file that
// cannot be read (a mistyped path).
describe('the command', () => {
  const run = (file: string, config: DatabaseConfig) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'scripts/import.ts', '--collection', 'posts', '--file', file], {
      cwd: join(__dirname, '../../..'),
      env: { ...process.env, DATABASE_URL: databaseUrl(config) },
      encoding: 'utf8',
    });
  /** A database that does not exist yet, on SQLite in a folder that does not either. */
  const missing = (): DatabaseConfig => {
    const config = freshConfig();
    return config.client === 'sqlite' ? { ...config, filename: join(dirname(config.filename), 'new', 'records.sqlite3') } : config;
  };
  const exists = async (config: DatabaseConfig) =>
    config.client === 'sqlite'
      ? existsSync(dirname(config.filename))
      : (await app.database.db.raw('SELECT 1 FROM information_schema.schemata WHERE schema_name = ?', [config.database]))[0].length > 0;
  const drop = (config: DatabaseConfig) =>
    config.client === 'sqlite' ? rmSync(join(config.filename, '../..'), { recursive: true, force: true }) : dropTestDatabase(config);
  const utf8 = (n: number) => JSON.stringify({ title: `cli ${n}`, content: 'c', author: 'a' });

  test.each([
    [
      'a --file that cannot be read',
      () => join(dir, 'no-such-file.jsonl'),
      /^import failed: --file: cannot read \S+no-such-file.jsonl \(ENOENT\)\n$/,
      true,
    ],
    [
      'a line that is not UTF-8',
      () => {
        const file = join(dir, `${++files}.jsonl`);
        writeFileSync(file, Buffer.from(`${utf8(1)}\n{"title": "\xff\xfe", "content": "c", "author": "a"}\n`, 'latin1'));
        return file;
      },
      /^import failed: line 2: line: is not valid UTF-8; nothing was imported\n$/,
      false,
    ],
    [
      'a JSON array over BODY_LIMIT (1 MiB by default) on one line',
      () => {
        const file = join(dir, `${++files}.jsonl`);
        writeFileSync(file, `[${Array.from({ length: 25_000 }, (_, i) => utf8(i)).join(',')}]`);
        return file;
      },
      /^import failed: line 1: line: is over 1,048,576 bytes, the largest record the API takes \(BODY_LIMIT\); the file must hold one JSON record a line; nothing was imported\n$/,
      false,
    ],
  ])(
    '%s: one line on stderr, exit 1',
    async (_, file, want, createsNothing) => {
      const config = missing();
      try {
        const result = run(file(), config);
        expect(result.stderr).toMatch(want);
        expect(result.status).toBe(1);
        if (createsNothing) expect(await exists(config)).toBe(false);
      } finally {
        await drop(config);
      }
    },
    30_000,
  );

  test('imports into a database that does not exist yet (on SQLite, in a folder that does not)', async () => {
    const config = missing();
    try {
      const result = run(ndjson([JSON.parse(utf8(2))]), config);
      expect(result.stdout).toMatch(/^imported 1 posts in /);
      expect(result.status).toBe(0);
      expect(await exists(config)).toBe(true);
    } finally {
      await drop(config);
    }
  }, 30_000);
});

// SQLite, `--exclusive`: a load writes into the file directly (a rollback journal, not the WAL)
// and puts WAL back; with another connection open it stays in WAL. Killed mid-load, nothing of
// it is left.
const sqliteOnly = dialect === 'sqlite' ? describe : describe.skip;
sqliteOnly('SQLite: writing the file directly', () => {
  const post = (n: number) => ({ title: `direct ${n}`, content: `lemniscate${n}`, author: 'a' });
  /** As written in the file's header: a plain connection, which sets no mode of its own. */
  const fileMode = (filename: string) => {
    const plain = new BetterSqlite3(filename);
    try {
      return plain.pragma('journal_mode', { simple: true }) as string;
    } finally {
      plain.close();
    }
  };
  const found = async (db: Db, search: string) =>
    listRecords(
      db,
      { table: 'posts', searchFields: ['title', 'content'] },
      { terms: parseSearch(search), filters: [], order, page: 1, pageSize: 10 },
      createSearch(),
    );

  test.each([
    ['with --exclusive, alone with the file, writes directly, then puts WAL back', true, false, [[true]]],
    ['with --exclusive and another connection open, goes through the WAL', true, true, [[false]]],
    ['without --exclusive, goes through the WAL', false, false, []],
  ])('an import %s', async (_, exclusive, shared, reported) => {
    const t = await createTestDatabase();
    const filename = t.config.client === 'sqlite' ? t.config.filename : '';
    const other = shared ? new BetterSqlite3(filename) : undefined;
    try {
      // As a running service's connection: it has read the file (and so opened its WAL).
      if (other) expect(other.prepare('SELECT COUNT(*) AS n FROM posts').get()).toEqual({ n: 0 });
      const onDirect = jest.fn();
      expect(await importFile(t.db, 'posts', ndjson([post(1), post(2)]), { exclusive, onDirect })).toBe(2);
      expect(onDirect.mock.calls).toEqual(reported);
      expect(fileMode(filename)).toBe('wal');
      expect(await found(t.db, 'lemniscate2')).toMatchObject({ count: 1 });
      if (other) expect(other.prepare('SELECT COUNT(*) AS n FROM posts').get()).toEqual({ n: 2 });
    } finally {
      other?.close();
      await t.drop();
    }
  });

  test('an import killed while it writes directly leaves nothing of it; the service opens the file in WAL, and it takes the next', async () => {
    const t = await createTestDatabase();
    const filename = t.config.client === 'sqlite' ? t.config.filename : '';
    await t.db.destroy(); // the import alone with the file
    const file = join(dir, 'corpus.jsonl');
    const out = createWriteStream(file);
    await writeCorpus(out, 120_000);
    out.end();
    await once(out, 'close');
    const args = ['--import', 'tsx', 'scripts/import.ts', '--collection', 'posts', '--file', file, '--exclusive'];
    const child = spawn(process.execPath, args, {
      cwd: join(__dirname, '../../..'),
      env: { ...process.env, DATABASE_URL: `sqlite:${filename}` },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const lines: string[] = [];
    createInterface({ input: child.stderr }).on('line', (line) => {
      lines.push(line);
      // 100,000 rows in, 20,000 to go in its transaction.
      if (line.startsWith('written 100,000 ')) child.kill('SIGKILL');
    });
    await once(child, 'close');
    expect(lines).toContainEqual(expect.stringMatching(/^writing into the file directly, not through the WAL/));
    expect(lines).toContainEqual(expect.stringMatching(/^written 100,000 records/));
    // Killed inside its transaction: a hot journal, and the header still in rollback mode.
    expect(existsSync(`${filename}-journal`)).toBe(true);
    expect(fileMode(filename)).toBe('delete');
    const db = openDb({ client: 'sqlite', filename });
    try {
      expect(await db.raw('PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
      expect(await db('posts').count({ n: '*' })).toEqual([{ n: 0 }]);
      expect(fileMode(filename)).toBe('wal');
      expect(await importFile(db, 'posts', ndjson([post(3)]))).toBe(1);
      expect(await found(db, 'lemniscate3')).toMatchObject({ count: 1 });
    } finally {
      await db.destroy();
      await t.drop();
    }
  });
});

// MySQL: an import's transaction bumps the count triggers' row for bulk loads, which no live
// connection maps to. It bumped its connection's slot, held it to its commit, and the service's
// creates whose connections mapped to that slot waited and failed.
const mysqlOnly = dialect === 'mysql' ? describe : describe.skip;
mysqlOnly('MySQL: an import beside live writes', () => {
  test('creates on connections of every count slot go through while an import is open, and counts stay exact', async () => {
    const t = await createTestDatabase();
    // As many connections as it takes to cover every slot that CONNECTION_ID() % 16 can give.
    const live = openDb(t.config, { size: 40, queryTimeoutMs: 10_000 });
    const pool = connectionPool<MysqlConnection>(live);
    const conns: MysqlConnection[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    try {
      const post = (n: number) => [`import ${n}`, `lemniscate ${n}`, 'a', '2020-01-01 00:00:00.000', '2020-01-01 00:00:00.000'];
      async function* rows() {
        yield post(1);
        yield post(2);
        // The first batch is written and the transaction stays open until the creates are done.
        await held;
        yield post(3);
      }
      let written!: () => void;
      const firstBatch = new Promise<void>((resolve) => (written = resolve));
      const load = writeRows(t.db, rows(), {
        table: 'posts',
        columns: ['title', 'content', 'author', 'created_at', 'updated_at'],
        batchBytes: 1,
        onProgress: () => written(),
      });
      await firstBatch;

      const slots = new Set<number>();
      while (slots.size < 16 && conns.length < 40) {
        const conn = await pool.acquireConnection();
        conns.push(conn);
        const [[{ id }]] = (await (conn as unknown as { promise(): { query(sql: string): Promise<[{ id: number }[]]> } })
          .promise()
          .query('SELECT CONNECTION_ID() AS id')) as [{ id: number }[]];
        slots.add(Number(id) % 16);
      }
      expect(slots.size).toBe(16);
      const started = Date.now();
      const creates = await Promise.allSettled(
        conns.map(async (conn, i) => {
          await run(conn, 'SET SESSION innodb_lock_wait_timeout = 2');
          await run(
            conn,
            `INSERT INTO posts (title, content, author, created_at, updated_at) VALUES ('live ${i}', 'c', 'a', NOW(3), NOW(3))`,
          );
        }),
      );
      expect(creates.filter((r) => r.status === 'rejected')).toEqual([]);
      expect(Date.now() - started).toBeLessThan(2000);
      release();
      expect(await load).toBe(3);
      expect(await countAll(t.db, 'posts')).toBe(3 + conns.length);
      const [{ n }] = await t.db('posts').count({ n: '*' });
      expect(Number(n)).toBe(3 + conns.length);
    } finally {
      release();
      for (const conn of conns) await pool.releaseConnection(conn);
      await live.destroy();
      await t.drop();
    }
  });
});

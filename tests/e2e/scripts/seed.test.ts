import Ajv from 'ajv';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import addFormats from 'ajv-formats';
import { rowSource } from '../../../scripts/seed/data';
import { seedCollection } from '../../../scripts/seed/index';
import { freePort } from '../../../scripts/lib/ports';
import { collections } from '../../../src/collections';
import { loadSpec } from '../../../src/spec';
import { pendingCount, scannedIds } from '../../helpers/scan';
import { startTestApp, type TestApp } from '../../helpers/app';

const STAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;
const SAMPLE = 2000;

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv, { mode: 'full' });
const components = loadSpec().components;

function rows(table: string, count = SAMPLE, seed = 42): Record<string, unknown>[] {
  const source = rowSource(table, count, seed);
  return Array.from({ length: count }, (_, i) => Object.fromEntries(source.columns.map((c, k) => [c, source.row(i)[k]])));
}

describe.each(collections.map((c) => [c.name, c] as const))('generated %s', (table, c) => {
  const generated = rows(table);

  test('every row is a valid create body, as the spec says', () => {
    const validate = ajv.compile({ $ref: `#/components/schemas/${c.resource}Write`, components });
    for (const { id: _id, created_at: _created, updated_at: _updated, ...body } of generated) {
      if (!validate(body)) throw new Error(`${JSON.stringify(body)}: ${ajv.errorsText(validate.errors)}`);
    }
  });

  test('ids count from 1; timestamps are stored UTC strings, rising with id, never edited before created', () => {
    generated.forEach((row, i) => {
      expect(row.id).toBe(i + 1);
      expect(row.created_at).toMatch(STAMP);
      expect(row.updated_at).toMatch(STAMP);
      expect(String(row.updated_at) >= String(row.created_at)).toBe(true);
      if (i) expect(String(row.created_at) >= String(generated[i - 1].created_at)).toBe(true);
    });
  });

  test('unique fields are unique (email ignoring case)', () => {
    for (const field of c.uniqueFields) {
      const values = generated.map((r) => String(r[field]).toLowerCase());
      expect(new Set(values).size).toBe(values.length);
    }
  });

  test('the same seed gives the same rows; another seed, other rows', () => {
    expect(rows(table, 50)).toEqual(rows(table, 50));
    expect(rows(table, 50, 7)).not.toEqual(rows(table, 50));
  });
});

describe('seeding a database', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  test.each(collections.map((c) => c.name))('%s: the service lists seeded records, newest first, as the spec says', async (table) => {
    await seedCollection(app.database.db, table, 25, { batchBytes: 2000 });
    const page = await app.request('GET', `/api/${table}/?page=1`);
    expect(page.status).toBe(200);
    expect(page.body.count).toBe(25);
    expect(page.body.results.map((r: { id: number }) => r.id)).toEqual([25, 24, 23, 22, 21, 20, 19, 18, 17, 16]);
    const one = await app.request('GET', `/api/${table}/1/`);
    expect(one.status).toBe(200);

    // Seeded rows are searchable, through the index where there is one, as a scan finds them.
    const field = collections.find((c) => c.name === table)!.searchFields[0];
    const word =
      String(one.body[field])
        .split(/[\s,"]+/)
        .find((w) => [...w].length >= 3) ?? String(one.body[field]);
    const found = await app.request('GET', `/api/${table}/?search=${encodeURIComponent(word)}&page_size=10`);
    const ids = await scannedIds(app.database.db, table, collections.find((c) => c.name === table)!.searchFields, [word]);
    expect(found.body.count).toBe(ids.length);
    expect(found.body.results.map((r: { id: number }) => r.id)).toEqual(ids.slice(0, 10));
    expect(ids).toContain(1);
    // ... and indexed: none left for the scan of pending records.
    expect(await pendingCount(app.database.db, table)).toBe(0);
  });

  test('a collection that has records is not overwritten unless asked to', async () => {
    await expect(seedCollection(app.database.db, 'posts', 5)).rejects.toThrow(/already has 25 rows/);
    await seedCollection(app.database.db, 'posts', 5, { reset: true });
    expect((await app.request('GET', '/api/posts/')).body.count).toBe(5);
    const created = await app.request('POST', '/api/posts/', { body: { title: 't', content: 'c', author: 'a' } });
    expect(created.body.id).toBe(6);
  });
});

// The command: a failure is one line on stderr (no stack trace) naming the database, and exit 1,
// as for import and export.
describe('the command, against a database it cannot use', () => {
  const run = (url: string) => {
    const { status, stdout, stderr } = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'scripts/seed.ts', '--collection', 'posts', '--count', '3'],
      { cwd: join(__dirname, '../../..'), env: { ...process.env, DATABASE_URL: url }, encoding: 'utf8' },
    );
    return { status, stdout, stderr };
  };
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'records-seed-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test.each([
    [
      'a MySQL server that refuses connections',
      async () => `mysql://root@127.0.0.1:${await freePort()}/records`,
      (url: string) =>
        `seed failed: cannot reach the database (MySQL ${url.slice('mysql://root@'.length)}): connect ECONNREFUSED ${url.slice('mysql://root@'.length).split('/')[0]}\n`,
    ],
    [
      'a SQLite file whose folder is a file',
      () => {
        writeFileSync(join(dir, 'plain'), '');
        return Promise.resolve(`sqlite:${join(dir, 'plain', 'records.sqlite3')}`);
      },
      (url: string) =>
        `seed failed: cannot open the database (SQLite file ${url.slice('sqlite:'.length)}): EEXIST: file already exists, mkdir '${join(dir, 'plain')}'\n`,
    ],
  ])(
    '%s: one line on stderr, exit 1',
    async (_, database, says) => {
      const url = await database();
      expect(run(url)).toEqual({ status: 1, stdout: '', stderr: says(url) });
    },
    30_000,
  );
});

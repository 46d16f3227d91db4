import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImportError, importFile } from '../../../scripts/import/index';
import { collections } from '../../../src/collections';
import { clientProperties, loadSpec } from '../../../src/spec';
import { startTestApp, type TestApp } from '../../helpers/app';
import { byName } from '../../helpers/fixtures';
import { databaseUrl } from '../../helpers/service';

// `npm run import` reads the CSV that `GET /api/<collection>/export/` writes: a collection
// exported as CSV from one database and imported into an empty one exports the same, as CSV and
// as NDJSON (which tells null from the empty string), ids and timestamps included.
let source: TestApp;
let target: TestApp;
let dir: string;
beforeAll(async () => {
  [source, target] = await Promise.all([startTestApp(), startTestApp()]);
  dir = mkdtempSync(join(tmpdir(), 'records-import-csv-'));
});
afterAll(async () => {
  await Promise.all([source.close(), target.close()]);
  rmSync(dir, { recursive: true, force: true });
});

let files = 0;
function write(text: string | Buffer, extension = 'csv'): string {
  const file = join(dir, `${++files}.${extension}`);
  writeFileSync(file, text);
  return file;
}

const spec = loadSpec();
const ajv = new Ajv({ strict: false });
addFormats(ajv, { mode: 'full' });
ajv.addSchema(spec, 'spec');

/** Values that CSV must quote, guard or tell apart; each field takes those its schema allows. */
const AWKWARD: unknown[] = [
  'He said "hi", then left',
  'line\nbreak\r\nand a lone\rCR',
  '=SUM(A1:A2)',
  '-5',
  '+1',
  '@home',
  '\tTabbed',
  '\rCarriage',
  "'=already guarded",
  "'-guarded, with a comma",
  'ÉCOLE 😀 日本語',
  '',
  '  padded  ',
  '"',
  ',',
  '0.5',
  '12',
  '99999999.99',
  0,
  2147483647,
];

/** Records for `name` holding the awkward values its fields take, some nulls, the rest from its fixture. */
function awkwardRecords(name: string): Record<string, unknown>[] {
  const c = collections.find((x) => x.name === name)!;
  const props = clientProperties(spec, c.resource);
  const fields = Object.keys(props);
  const base = byName[name].rows(AWKWARD.length);
  return base.map((row, i) =>
    Object.fromEntries(
      fields.map((field, k) => {
        const valid = ajv.getSchema(`spec#/components/schemas/${c.resource}Write/properties/${field}`)!;
        if (props[field].nullable && i % 3 === 0) return [field, null];
        const given = AWKWARD[(i + k) % AWKWARD.length];
        // A unique field's value is made distinct where its schema lets it.
        const value = (c.uniqueFields as readonly string[]).includes(field) && typeof given === 'string' ? `${given}${i}` : given;
        return [field, valid(value) ? value : row[field]];
      }),
    ),
  );
}

const exported = async (app: TestApp, name: string, accept: string): Promise<string> => {
  // Oldest id first: the import gives ids in the order of the file.
  const res = await app.request('GET', `/api/${name}/export/?ordering=id`, { headers: { accept } });
  expect(res.status).toBe(200);
  return res.body as string;
};

test.each(collections.map((c) => c.name))('%s: exported as CSV, imported into an empty database, exports the same', async (name) => {
  const records = awkwardRecords(name);
  for (const body of records) {
    const res = await source.request('POST', `/api/${name}/`, { body });
    expect(res.status).toBe(201);
  }
  // A record changed after it was made: its two timestamps differ.
  const patched = await source.request('PATCH', `/api/${name}/1/`, { body: byName[name].patch });
  expect(patched.status).toBe(200);

  const csv = await exported(source, name, 'text/csv');
  // The file holds what the test is about: quoted line breaks, doubled quotes, guarded cells.
  expect(csv).toMatch(/"[^"\r\n]*(\r\n|\n)/);
  expect(csv).toContain('"\'');
  expect(await importFile(target.database.db, name, write(csv))).toBe(records.length);

  expect(await exported(target, name, 'text/csv')).toBe(csv);
  expect(await exported(target, name, 'application/x-ndjson')).toBe(await exported(source, name, 'application/x-ndjson'));
});

describe('a CSV file that is bad', () => {
  const header = 'id,title,content,author,created_at,updated_at\r\n';
  const good = (n: number) => `,"bad ${n}","two\r\nlines",ada,,\r\n`;
  const count = async () => (await target.request('GET', '/api/posts/')).body.count as number;

  test.each([
    [
      'a field the schema refuses',
      `${header}${good(1)},"",c,a,,\r\n${good(2)}`,
      /^line 4: title: must NOT have fewer than 1 characters; nothing was imported$/,
    ],
    [
      'a record with too few fields',
      `${header}${good(1)}t,c,a\r\n`,
      /^line 4: record: has 3 fields where the header has 6; nothing was imported$/,
    ],
    [
      'a quote left open, which the next quote closes',
      `${header}${good(1)},"open,c,a,,\r\n${good(2)}`,
      /^line 5: record: text after the closing quote of a field opened on line 4 \(a quote left open there\?\)/,
    ],
    [
      'a quote left open to the end',
      `${header}${good(1)},"open,c,a,,\r\nmore,text\r\n`,
      /^line 4: record: a quoted field that starts on this line is never closed; nothing was imported$/,
    ],
    [
      'a field unknown to posts',
      `title,colour\r\nt,red\r\n`,
      /^line 1: colour: is not a field of posts \(title, content, author, id, created_at, updated_at\)/,
    ],
    [
      'a bad record before one that breaks the format (the first is named)',
      `${header}${good(1)},"",c,a,,\r\nt"x,c,a,,\r\n`,
      /^line 4: title: must NOT have fewer than 1 characters; nothing was imported$/,
    ],
    ['a bad created_at', `${header}${good(1)},t,c,a,yesterday,\r\n`, /^line 4: created_at: must be an RFC 3339 date-time/],
  ] as [string, string, RegExp][])('%s stops the import with its line and field; nothing is written', async (_name, text, want) => {
    const before = await count();
    await expect(importFile(target.database.db, 'posts', write(text))).rejects.toThrow(want);
    await expect(importFile(target.database.db, 'posts', write(text))).rejects.toBeInstanceOf(ImportError);
    expect(await count()).toBe(before);
  });

  test('a unique field repeated in the file, named at the line its record starts', async () => {
    const text = 'title,author,isbn\r\n"one\r\nbook",a,9780000000001\r\n"two",b,9780000000001\r\n';
    await expect(importFile(target.database.db, 'books', write(text))).rejects.toThrow(
      /^line 4: isbn: must be unique; line 2 has the same value/,
    );
  });

  test('bytes that are not UTF-8 stop it at their line, after a record on two lines', async () => {
    const bytes = Buffer.concat([Buffer.from(`${header}${good(1)},t,c,`), Buffer.from([0xff]), Buffer.from(',,\r\n')]);
    await expect(importFile(target.database.db, 'posts', write(bytes))).rejects.toThrow(
      /^line 4: line: is not valid UTF-8; nothing was imported$/,
    );
  });

  test('a record over the limit stops it, and a quote left open is named', async () => {
    const text = `${header}${good(1)},"${'x'.repeat(200)}`;
    await expect(importFile(target.database.db, 'posts', write(text), { maxLineBytes: 100 })).rejects.toThrow(
      /^line 4: record: is over 100 bytes, the largest record the API takes \(BODY_LIMIT\) \(a quoted field opened on line 4 is still open\)/,
    );
  });
});

test('a byte order mark before the header is skipped, as spreadsheets write one', async () => {
  const before = (await target.request('GET', '/api/posts/')).body.count as number;
  expect(await importFile(target.database.db, 'posts', write('\ufefftitle,content,author\r\nbom,c,a\r\n'))).toBe(1);
  expect((await target.request('GET', '/api/posts/')).body.count).toBe(before + 1);
});

test('the command reads CSV by --format whatever the extension, and refuses an unknown format', () => {
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'scripts/import.ts', '--collection', 'posts', ...args], {
      cwd: join(__dirname, '../../..'),
      env: { ...process.env, DATABASE_URL: databaseUrl(target.database.config) },
      encoding: 'utf8',
    });
  const file = write('title,content,author\r\n"by, flag",c,a\r\n', 'txt');
  const imported = run('--file', file, '--format', 'csv');
  expect(imported.stdout).toMatch(/^imported 1 posts in /);
  expect(imported.status).toBe(0);
  const refused = run('--file', file, '--format', 'xml');
  expect(refused.stderr).toBe('import failed: --format must be csv or ndjson, not "xml"\n');
  expect(refused.status).toBe(1);
}, 60_000);

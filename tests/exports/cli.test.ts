import { spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import type { DatabaseConfig } from '../../src/config';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportCollection, ExportError } from '../../scripts/export/index';
import { importFile } from '../../scripts/import/index';
import { createTestDatabase } from '../helpers/db';
import { startTestApp, type TestApp } from '../helpers/app';
import { fixtures } from '../helpers/fixtures';

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

async function exported(name: string): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await exportCollection(app.database.db, name, out);
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

test('the command writes the same lines to stdout and a count to stderr', async () => {
  const run = spawnSync('npx', ['tsx', 'scripts/export.ts', '--collection', 'posts'], {
    env: { ...process.env, DATABASE_URL: databaseUrl(app.database.config) },
    encoding: 'utf8',
  });
  expect(run.status).toBe(0);
  expect(run.stdout).toBe(await exported('posts'));
  expect(run.stderr).toMatch(/exported 4 posts in/);
}, 30_000);

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

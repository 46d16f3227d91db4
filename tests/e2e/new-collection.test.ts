import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

// "A collection is the spec, its declaration and its migration": in a copy of the project, the
// three edits that docs/adding-a-collection.md shows (read from the page itself, so the page
// cannot drift from what works) add a `comments` collection; then the types are generated, the
// project type-checks, and the generic suites run on it (SQLite), their tests about comments only.
const root = join(__dirname, '../..');
const PAGE = 'docs/adding-a-collection.md';

/** Where each edit of the page goes: after (or before) the first match in its file. */
const PLACES: Record<string, { file: string; after?: RegExp; before?: RegExp }> = {
  'spec-tags': { file: 'openapi/openapi.yaml', after: /^tags:\n/m },
  'spec-paths': { file: 'openapi/openapi.yaml', after: /^paths:\n/m },
  'spec-parameters': { file: 'openapi/openapi.yaml', after: /^ {2}parameters:\n/m },
  'spec-schemas': { file: 'openapi/openapi.yaml', after: /^ {2}schemas:\n/m },
  'spec-search-table': { file: 'openapi/openapi.yaml', after: /^ *\| collection \| searched fields \|\n *\|---\|---\|\n/m },
  declaration: { file: 'src/collections.ts', before: /^\] as const;/m },
  migration: { file: 'src/db/migrations.ts', before: /^const source: /m },
};

/** The table-driven suites that cover every declared collection. */
const SUITES = [
  'tests/unit/spec.rules.test.ts',
  'tests/unit/spec.test.ts',
  'tests/integration/db/schema.test.ts',
  'tests/integration/handlers/crud.test.ts',
  'tests/integration/handlers/filters.test.ts',
  'tests/integration/handlers/ordering.test.ts',
  'tests/integration/handlers/validation.test.ts',
  'tests/integration/handlers/list.test.ts',
  'tests/integration/handlers/conditional.test.ts',
  'tests/integration/handlers/cursor.test.ts',
  'tests/integration/handlers/idempotency.test.ts',
  'tests/integration/generated/client.test.ts',
];

function edits(page: string): { name: string; text: string }[] {
  return [...page.matchAll(/<!-- edit: ([\w-]+) -->\n\n```\w+\n([\s\S]*?)\n```/g)].map((m) => ({ name: m[1], text: `${m[2]}\n` }));
}

function run(cwd: string, command: string, args: string[], timeoutMs: number): { status: number | null; output: string } {
  const r = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, TEST_DB: 'sqlite', CI: '', FORCE_COLOR: '0' },
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.slice(-8000) };
}

// One folder per checkout, emptied each run: at the same path, jest's transform cache from the
// last run still serves the files that did not change, which more than halves the run.
const copy = join(tmpdir(), `records-new-collection-${createHash('sha256').update(root).digest('hex').slice(0, 12)}`);
// The suites run on SQLite; nothing here depends on the database. The MySQL lane, running beside
// it, must not touch the copy either: its afterAll removed the folder under the SQLite run.
const mysqlLane = process.env.TEST_DB === 'mysql';
const sqliteOnly = mysqlLane ? test.skip : test;

beforeAll(() => {
  if (mysqlLane) return;
  rmSync(copy, { recursive: true, force: true });
  const listed = spawnSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: root, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  for (const file of listed.stdout.split('\n').filter(Boolean)) {
    if (!existsSync(join(root, file))) continue;
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    copyFileSync(join(root, file), join(copy, file));
  }
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
});
afterAll(() => {
  if (!mysqlLane) rmSync(copy, { recursive: true, force: true });
});

test('the page shows exactly the three edits: spec, declaration, migration', () => {
  const found = edits(readFileSync(join(root, PAGE), 'utf8'));
  expect(found.map((e) => e.name).sort()).toEqual(Object.keys(PLACES).sort());
  expect([...new Set(found.map((e) => PLACES[e.name].file))].sort()).toEqual([
    'openapi/openapi.yaml',
    'src/collections.ts',
    'src/db/migrations.ts',
  ]);
});

sqliteOnly(
  'a collection added by those edits passes the generic suites',
  () => {
    for (const { name, text } of edits(readFileSync(join(copy, PAGE), 'utf8'))) {
      const place = PLACES[name];
      const path = join(copy, place.file);
      const source = readFileSync(path, 'utf8');
      const m = (place.after ?? place.before)!.exec(source);
      if (!m) throw new Error(`${name}: no place for it in ${place.file}`);
      const at = place.after ? m.index + m[0].length : m.index;
      writeFileSync(path, source.slice(0, at) + text + source.slice(at));
    }

    const generated = run(copy, 'node', ['scripts/generate-types.mjs'], 120_000);
    expect({ step: 'npm run generate', ...generated }).toMatchObject({ status: 0 });
    expect(readFileSync(join(copy, 'src/generated/openapi.ts'), 'utf8')).toContain('listComments');

    const typed = run(copy, 'npx', ['tsc', '--noEmit', '-p', '.'], 300_000);
    expect({ step: 'npm run typecheck', ...typed }).toMatchObject({ status: 0 });

    // Only the tests that name the new collection: the others ran on the project as it is.
    const report = join(copy, 'jest-report.json');
    const suites = run(
      copy,
      'npx',
      ['jest', '--selectProjects', 'unit', 'integration', '--runInBand', '-t', '[Cc]omment', '--json', '--outputFile', report, ...SUITES],
      600_000,
    );
    if (!existsSync(report)) throw new Error(`jest wrote no report (exit ${suites.status}):\n${suites.output}`);
    const results = JSON.parse(readFileSync(report, 'utf8')) as {
      numPassedTests: number;
      testResults: { name: string; message: string; assertionResults: { fullName: string; status: string; failureMessages: string[] }[] }[];
    };
    const failures = results.testResults.flatMap((file) => [
      ...(file.assertionResults.length ? [] : [`${file.name}: ${file.message.slice(0, 2000)}`]),
      ...file.assertionResults
        .filter((a) => a.status === 'failed')
        .map((a) => `${a.fullName}: ${a.failureMessages.join('\n').slice(0, 2000)}`),
    ]);
    expect({ step: 'the generic suites', failures }).toEqual({ step: 'the generic suites', failures: [] });
    expect({ step: 'the generic suites', status: suites.status, output: suites.status === 0 ? '' : suites.output }).toEqual({
      step: 'the generic suites',
      status: 0,
      output: '',
    });
    expect(results.testResults.map((r) => r.name.slice(copy.length + 1)).sort()).toEqual([...SUITES].sort());
    // Each suite ran tests of comments (a suite that left it out would pass having run none).
    expect(results.numPassedTests).toBeGreaterThan(500);
  },
  900_000,
);

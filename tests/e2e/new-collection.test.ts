import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

// "A collection is the spec, its declaration and its migration", written by one command: in a copy
// of the project, the `npm run new-collection` that docs/adding-a-collection.md shows (read from the
// page itself, so the page cannot drift from what works) adds a collection; then the spec is
// linted, the project type-checks, and the generic suites run on it (SQLite), their tests about the
// new collection only.
const root = join(__dirname, '../..');
const PAGE = 'docs/adding-a-collection.md';
/** The files the command writes, and the types it regenerates. */
const WRITTEN = ['openapi/openapi.yaml', 'src/collections.ts', 'src/db/migrations.ts', 'src/generated/openapi.ts'];

/** The page's command as argv: `\` continues a line, single quotes hold a field's words together. */
function pageCommand(page: string): string[] {
  const block = /<!-- new-collection -->\n\n```sh\n([\s\S]*?)\n```/.exec(page)?.[1];
  if (!block) throw new Error(`${PAGE} shows no command after <!-- new-collection -->`);
  return [...block.replace(/\\\n/g, ' ').matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

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

test('the page shows the command, for a collection with a searched, a unique and a filtered field', () => {
  const argv = pageCommand(readFileSync(join(root, PAGE), 'utf8'));
  expect(argv.slice(0, 4)).toEqual(['npm', 'run', 'new-collection', '--']);
  const fields = argv.filter((_a, i) => argv[i - 1] === '--field').map((f) => f.split(/\s+/));
  for (const flag of ['search', 'unique', 'filter']) expect([flag, fields.some((f) => f.includes(flag))]).toEqual([flag, true]);
});

sqliteOnly(
  'a collection added by that command passes the spec lint, the type check and the generic suites',
  () => {
    const argv = pageCommand(readFileSync(join(copy, PAGE), 'utf8'));
    const name = argv[4];
    const added = run(copy, argv[0], ['run', '-s', ...argv.slice(2)], 120_000);
    expect({ step: 'npm run new-collection', ...added }).toMatchObject({ status: 0 });

    // Written once: run again, it refuses and leaves every file as it was.
    const before = WRITTEN.map((f) => readFileSync(join(copy, f), 'utf8'));
    const again = run(copy, argv[0], ['run', '-s', ...argv.slice(2)], 120_000);
    expect({ status: again.status, refused: /nothing was written/.test(again.output) }).toEqual({ status: 1, refused: true });
    expect(WRITTEN.filter((f, i) => readFileSync(join(copy, f), 'utf8') !== before[i])).toEqual([]);

    for (const script of ['lint:spec', 'lint:security']) {
      const linted = run(copy, 'npm', ['run', '-s', script], 120_000);
      expect({ step: `npm run ${script}`, ...linted }).toMatchObject({ status: 0 });
    }
    const formatted = run(copy, 'npx', ['prettier', '--check', 'src/collections.ts', 'src/db/migrations.ts'], 60_000);
    expect({ step: 'prettier --check', ...formatted }).toMatchObject({ status: 0 });
    const plural = name.replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase());
    expect(readFileSync(join(copy, 'src/generated/openapi.ts'), 'utf8')).toContain(`list${plural}`);

    const typed = run(copy, 'npx', ['tsc', '--noEmit', '-p', '.'], 300_000);
    expect({ step: 'npm run typecheck', ...typed }).toMatchObject({ status: 0 });

    // Only the tests that name the new collection: the others ran on the project as it is.
    const named = `[${name[0].toUpperCase()}${name[0]}]${name.slice(1).replace(/s$/, '')}`;
    const report = join(copy, 'jest-report.json');
    const suites = run(
      copy,
      'npx',
      ['jest', '--selectProjects', 'unit', 'integration', '--runInBand', '-t', named, '--json', '--outputFile', report, ...SUITES],
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
    // Each suite ran tests of the collection (a suite that left it out would pass having run none).
    expect(results.numPassedTests).toBeGreaterThan(500);
  },
  900_000,
);

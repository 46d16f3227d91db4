// `npm run test:unit`: the fast tier, the jest tests that need no database, no child process and
// no fuzzer run. Which tests those are follows from what they import: every test file that does
// not depend, directly or through its imports (jest's own dependency graph, --findRelatedTests),
// on one of the modules below. So a new test file falls into its tier by itself. Arguments are
// passed on to jest (`npm run test:unit -- --watch`).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const jestBin = createRequire(import.meta.url).resolve('jest/bin/jest');

/** What puts a test in the full run only (`npm test`). */
const FULL_RUN_ONLY = [
  'tests/helpers/db.ts', // a database (SQLite or MySQL), through every test app
  'tests/helpers/service.ts', // the service as a child process
  'scripts/lib/service-process.ts',
  'tests/helpers/mariadb.ts', // a MariaDB server of the test's own
  'tests/helpers/fuzz/run.ts', // the fuzzer
];

function listTests(args) {
  const r = spawnSync(process.execPath, [jestBin, '--listTests', '--json', ...args], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`jest --listTests failed:\n${r.stderr}`);
  return JSON.parse(r.stdout).map((file) => relative(root, file));
}

const full = new Set(listTests(['--findRelatedTests', ...FULL_RUN_ONLY]));
const unit = listTests([])
  .filter((file) => !full.has(file))
  .sort();
if (!unit.length) {
  console.error('no unit tests found');
  process.exit(1);
}
console.log(`unit tier: ${unit.length} test files (${full.size} more run only in \`npm test\`)`);
const r = spawnSync(process.execPath, [jestBin, '--runInBand', ...process.argv.slice(2), '--runTestsByPath', ...unit], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, TEST_DB: 'sqlite' },
});
process.exit(r.status ?? 1);

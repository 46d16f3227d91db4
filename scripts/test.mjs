// The README's test command and the tier scripts (docs/testing.md):
//   node scripts/test.mjs            static checks, unit, then integration, e2e and the Arazzo
//                                    workflows on SQLite and on MySQL side by side
//   node scripts/test.mjs unit | integration | e2e     one tier (integration and e2e on both databases)
// MySQL is used when it answers (MYSQL_URL, default the local server); under CI it must answer.
// Ends with a "N passed, N failed" line.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { respect } from './respect.mjs';

const mysqlUrl = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/');
const [only = 'all', ...jestArgs] = process.argv.slice(2);
const TIERS = ['unit', 'integration', 'e2e'];
if (only !== 'all' && !TIERS.includes(only)) {
  console.error(`usage: node scripts/test.mjs [${TIERS.join('|')}] [jest arguments]`);
  process.exit(2);
}
const outDir = mkdtempSync(join(tmpdir(), 'records-jest-'));
const counts = [];
const startedAt = Date.now();

/** Runs a command; its output is printed in one piece when it ends, so parallel runs stay readable. */
function run(title, command, args, env = {}) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (d) => output.push(d));
    child.stderr.on('data', (d) => output.push(d));
    child.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(0);
      process.stdout.write(`\n== ${title} (${seconds} s${code === 0 ? '' : `, exit ${code}`})\n${Buffer.concat(output)}`);
      resolve(code === 0);
    });
  });
}

async function jest(tier, database) {
  const label = tier === 'unit' ? 'unit' : `${tier} on ${database}`;
  const started = Date.now();
  const outputFile = join(outDir, `${tier}-${database}.json`);
  const args = ['jest', '--selectProjects', tier, '--json', `--outputFile=${outputFile}`, ...jestArgs];
  // The unit tier spreads over jest's workers; the others run one file at a time per database.
  if (tier !== 'unit') args.push('--runInBand');
  const ok = await run(`jest: ${label}`, 'npx', args, { TEST_DB: database });
  try {
    const r = JSON.parse(readFileSync(outputFile, 'utf8'));
    const seconds = Math.round((Date.now() - started) / 1000);
    counts.push({
      label,
      passed: r.numPassedTests,
      failed: r.numFailedTests + r.numRuntimeErrorTestSuites,
      skipped: r.numPendingTests,
      seconds,
    });
  } catch {
    counts.push({ label, passed: 0, failed: 1, skipped: 0 });
  }
  return ok;
}

async function workflows(database) {
  const r = await respect(database, mysqlUrl.toString());
  counts.push({ label: `Arazzo steps on ${database}`, passed: r.passed, failed: r.failed, skipped: 0 });
  return r.ok;
}

function answers(host, port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port, timeout: 2000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const STATIC = [
  ['type check', 'npx', ['tsc', '--noEmit']],
  ['lint', 'npm', ['run', '-s', 'lint']],
  ['format (Prettier)', 'npm', ['run', '-s', 'format:check']],
  ['spec lint', 'npm', ['run', '-s', 'lint:spec']],
  ['security lint of the contract (Spectral, OWASP ruleset)', 'npm', ['run', '-s', 'lint:security']],
  ['generated types are current', 'npm', ['run', '-s', 'generate', '--', '--check']],
  // dist/ is what `npm start` runs; an e2e test starts it.
  ['build (dist/)', 'npm', ['run', '-s', 'build']],
  ['no breaking change since the released contract', 'npm', ['run', '-s', 'check:breaking']],
];

// jest's projects look only in the tier folders: a test file anywhere else would never run.
const strays = readdirSync('tests', { recursive: true }).filter(
  (f) => String(f).endsWith('.test.ts') && !TIERS.some((tier) => String(f).startsWith(`${tier}/`)),
);
if (strays.length) {
  console.error(`Test files outside tests/${TIERS.join('|')}/ would never run: ${strays.join(', ')}`);
  process.exit(1);
}

let ok = true;
const databases = ['sqlite'];
if (only !== 'unit') {
  if (await answers(mysqlUrl.hostname, Number(mysqlUrl.port || 3306))) databases.push('mysql');
  else if (process.env.CI) {
    console.error(`\nMySQL does not answer at ${mysqlUrl.host}; CI requires it.`);
    ok = false;
  } else console.log(`\n== MySQL does not answer at ${mysqlUrl.host}: its runs are skipped (set MYSQL_URL to point at one).`);
}

if (only === 'all') {
  // The static checks and the unit tier need no database: side by side.
  const checks = (async () => {
    let all = true;
    for (const [title, command, args] of STATIC) all = (await run(title, command, args)) && all;
    return all;
  })();
  const results = await Promise.all([checks, jest('unit', 'sqlite')]);
  ok = results.every(Boolean) && ok;
} else if (only === 'unit') ok = (await jest('unit', 'sqlite')) && ok;
else if (only === 'e2e') ok = (await run('build (dist/)', 'npm', ['run', '-s', 'build'])) && ok;

if (only !== 'unit') {
  // One lane per database: they share nothing (each test makes its own database), so they run
  // side by side.
  const lane = async (database) => {
    let all = true;
    if (only === 'all' || only === 'integration') all = (await jest('integration', database)) && all;
    if (only === 'all' || only === 'e2e') {
      all = (await jest('e2e', database)) && all;
      all = (await workflows(database)) && all;
    }
    return all;
  };
  ok = (await Promise.all(databases.map(lane))).every(Boolean) && ok;
}

console.log('\n== summary');
for (const c of counts)
  console.log(
    `${c.label}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped${c.seconds === undefined ? '' : ` (${c.seconds} s)`}`,
  );
const passed = counts.reduce((n, c) => n + c.passed, 0);
const failed = counts.reduce((n, c) => n + c.failed, 0) + (ok ? 0 : counts.every((c) => c.failed === 0) ? 1 : 0);
console.log(`${passed} passed, ${failed} failed, in ${Math.round((Date.now() - startedAt) / 1000)} s`);
process.exit(ok && failed === 0 ? 0 : 1);

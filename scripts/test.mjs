// The README's test command: type check, lint and format check, spec lint (Redocly, then Spectral's OWASP rules),
// generated-types check, the breaking-change gate, the build to dist/ (one test starts
// `node dist/main.js`, as `npm start` does), then on SQLite and on
// MySQL every jest test (the typed-client tests and the fuzzer among them) and the Arazzo
// workflows run by `redocly respect` (scripts/respect.mjs). MySQL is used when it answers
// (MYSQL_URL, default the local server); under CI it must answer. Prints per-database counts and
// a closing "N passed, N failed" line.
import { spawnSync } from 'node:child_process';
import { readFileSync, mkdtempSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { respect } from './respect.mjs';

const mysqlUrl = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/');
const extraJestArgs = process.argv.slice(2);

function run(title, command, args, env = {}) {
  console.log(`\n== ${title}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  return result.status === 0;
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

const outDir = mkdtempSync(join(tmpdir(), 'records-jest-'));
const counts = [];
function jest(dialect) {
  const outputFile = join(outDir, `${dialect}.json`);
  const ok = run(`jest on ${dialect}`, 'npx', ['jest', '--runInBand', '--json', `--outputFile=${outputFile}`, ...extraJestArgs], {
    TEST_DB: dialect,
  });
  try {
    const r = JSON.parse(readFileSync(outputFile, 'utf8'));
    counts.push({ dialect, passed: r.numPassedTests, failed: r.numFailedTests + r.numRuntimeErrorTestSuites, skipped: r.numPendingTests });
  } catch {
    counts.push({ dialect, passed: 0, failed: 1, skipped: 0 });
  }
  return ok;
}

async function workflows(dialect) {
  console.log(`\n== Arazzo workflows on ${dialect} (redocly respect)`);
  const r = await respect(dialect, mysqlUrl.toString());
  counts.push({ dialect: `${dialect}, Arazzo steps`, passed: r.passed, failed: r.failed, skipped: 0 });
  return r.ok;
}

let ok = true;
ok = run('type check', 'npx', ['tsc', '--noEmit']) && ok;
ok = run('lint (ESLint, type-checked rules)', 'npm', ['run', '-s', 'lint']) && ok;
ok = run('format (Prettier)', 'npm', ['run', '-s', 'format:check']) && ok;
ok = run('spec lint', 'npm', ['run', '-s', 'lint:spec']) && ok;
ok = run('security lint of the contract (Spectral, OWASP ruleset)', 'npm', ['run', '-s', 'lint:security']) && ok;
ok = run('generated types are current', 'npm', ['run', '-s', 'generate', '--', '--check']) && ok;
ok = run('build (dist/)', 'npm', ['run', '-s', 'build']) && ok;
ok = run('no breaking change since the released contract', 'npm', ['run', '-s', 'check:breaking']) && ok;
ok = jest('sqlite') && ok;
ok = (await workflows('sqlite')) && ok;
if (await answers(mysqlUrl.hostname, Number(mysqlUrl.port || 3306))) {
  ok = jest('mysql') && ok;
  ok = (await workflows('mysql')) && ok;
} else if (process.env.CI) {
  console.error(`\nMySQL does not answer at ${mysqlUrl.host}; CI requires it.`);
  ok = false;
} else {
  console.log(`\n== MySQL does not answer at ${mysqlUrl.host}: the MySQL run is skipped (set MYSQL_URL to point at one).`);
}

console.log('\n== summary');
for (const c of counts) console.log(`${c.dialect}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`);
const passed = counts.reduce((n, c) => n + c.passed, 0);
const failed = counts.reduce((n, c) => n + c.failed, 0) + (ok ? 0 : counts.every((c) => c.failed === 0) ? 1 : 0);
console.log(`${passed} passed, ${failed} failed`);
process.exit(ok && failed === 0 ? 0 : 1);

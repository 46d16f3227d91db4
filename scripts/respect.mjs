// Runs the Arazzo workflows (openapi/*.arazzo.yaml) with `redocly respect` against the service,
// started here from its source (src/main.ts through tsx, by scripts/lib/service-process.ts) on a
// free port and a fresh database of one dialect, then stops it and drops the database. Used by
// scripts/test.mjs; on its own:
//   node scripts/respect.mjs sqlite|mysql
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { require as tsRequire } from 'tsx/cjs/api';

const root = fileURLToPath(new URL('..', import.meta.url));
const START_TIMEOUT_MS = 90_000;
/** The one helper that starts the service as a process (TypeScript, loaded through tsx). */
const { startService } = tsRequire('./lib/service-process.ts', import.meta.url);

/** A step passes when none of its error-level checks failed (respect's own checks included). */
function countSteps(report) {
  let passed = 0;
  let failed = 0;
  for (const file of Object.values(report.files ?? {})) {
    for (const workflow of file.executedWorkflows ?? []) {
      for (const step of workflow.executedSteps ?? []) {
        const ok = (step.checks ?? []).every((c) => c.passed || c.severity !== 'error');
        if (ok) passed++;
        else failed++;
      }
    }
  }
  return { passed, failed };
}

/** Runs every workflow on one dialect; returns step counts and whether respect passed. */
export async function respect(dialect, mysqlServerUrl = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/') {
  const name = `records_test_respect_${randomBytes(4).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'records-respect-'));
  let databaseUrl = `sqlite:${join(dir, `${name}.sqlite3`)}`;
  if (dialect === 'mysql') {
    const server = new URL(mysqlServerUrl);
    server.pathname = `/${name}`;
    databaseUrl = server.toString();
  }
  const started = startService(
    { entry: 'source', env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: databaseUrl } },
    START_TIMEOUT_MS,
  );
  const files = readdirSync(join(root, 'openapi'))
    .filter((f) => f.endsWith('.arazzo.yaml'))
    .map((f) => join('openapi', f));
  const reportPath = join(dir, 'respect.json');
  try {
    const { url } = await started;
    console.log(`respect (${dialect}): ${files.length} workflow files against ${url}`);
    const result = spawnSync('npx', ['redocly', 'respect', ...files, '--server', `records=${url}`, '-J', reportPath], {
      cwd: root,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off' },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    const output = `${result.stdout}${result.stderr}`;
    let counts = { passed: 0, failed: 1 };
    try {
      counts = countSteps(JSON.parse(readFileSync(reportPath, 'utf8')));
    } catch {
      // no report: respect could not run; its output says why
    }
    const ok = result.status === 0 && counts.failed === 0 && counts.passed > 0;
    // The whole step-by-step log only when something failed; else respect's summary table.
    console.log(
      ok
        ? output
            .split('\n')
            .filter((l) => /^[│┌└├]/.test(l))
            .join('\n')
        : output,
    );
    console.log(`respect (${dialect}): ${counts.passed} steps passed, ${counts.failed} failed`);
    return { ...counts, ok };
  } catch (err) {
    console.error(`respect (${dialect}): ${err.message}`);
    return { passed: 0, failed: 1, ok: false };
  } finally {
    await started.then(
      (service) => service.stop(),
      () => undefined,
    );
    rmSync(dir, { recursive: true, force: true });
    if (dialect === 'mysql') await dropDatabase(mysqlServerUrl, name);
  }
}

async function dropDatabase(serverUrl, name) {
  if (!name.startsWith('records_test_')) throw new Error(`refusing to drop ${name}`);
  const u = new URL(serverUrl);
  const conn = await mysql.createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password),
  });
  try {
    await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
  } finally {
    await conn.end();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dialect = process.argv[2] === 'mysql' ? 'mysql' : 'sqlite';
  const { ok } = await respect(dialect);
  process.exit(ok ? 0 : 1);
}

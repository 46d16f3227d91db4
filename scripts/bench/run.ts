// `npm run bench`: seeds if needed, starts the service and the baseline, drives both through
// each scenario with autocannon, and reports requests/s, p50, p99 and service ÷ baseline.
// Exit code 1 when the harness itself fails (a server does not start, requests fail); missed
// targets are reported, not failed: speed is judged on the report, never by a flaky exit code.
import { cpus, loadavg, totalmem, release } from 'node:os';
import { resolve } from 'node:path';
import autocannonPackage from 'autocannon/package.json';
import { runAuthBench } from './auth';
import { runClusterBench } from './cluster';
import { type BenchDatabase, listPageQueryTimes, prepareDatabase, removeWrites, serverVersion, waitForQuiet } from './database';
import { databaseUrlFor, type BenchOptions, OptionsError, parseOptions, USAGE } from './options';
import { renderReport, type Report, type ScaleResult, type ScenarioResult, writeReport } from './report';
import { getSecret } from '../../src/db/secrets';
import { dbTimestamp } from '../../src/db/time';
import { encodeCursor, fingerprint } from '../../src/handlers/cursor';
import { measure, type Measurement, SCENARIOS, type ScenarioContext } from './scenarios';
import { runSearchBench } from './searchSuite';
import { runSoak } from './soak';
import { ROOT, type RunningServer, startServer } from './servers';

/** One service per worker count (WEB_CONCURRENCY), then the baseline; all stopped if one fails. */
async function startAll(database: BenchDatabase, options: BenchOptions, workers: number[]): Promise<[RunningServer[], RunningServer]> {
  const profile = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${resolve(options.profileDir)}`] : [];
  const started: RunningServer[] = [];
  try {
    for (const n of workers) {
      const name = workers.length > 1 || n > 1 ? `service×${n}` : 'service';
      started.push(await startServer(name, 'built', { DATABASE_URL: database.url, WEB_CONCURRENCY: String(n) }, profile));
    }
    const baseline = await startServer('baseline', 'scripts/bench/baseline.ts', { DATABASE_URL: database.url });
    return [started, baseline];
  } catch (err) {
    await Promise.all(started.map((s) => s.stop()));
    throw err;
  }
}

async function startBoth(database: BenchDatabase, options: BenchOptions): Promise<[RunningServer, RunningServer]> {
  const [[service], baseline] = await startAll(database, options, options.workers.slice(0, 1));
  return [service, baseline];
}

/** A warm-up run, not counted, then the measured one, each on a database with nothing running. */
async function drive(
  server: RunningServer,
  request: Parameters<typeof measure>[1],
  database: BenchDatabase,
  options: BenchOptions,
): Promise<Measurement> {
  if (options.warmup > 0) {
    await waitForQuiet(database.db);
    await measure(server.url, request, options.warmup, options.connections);
  }
  await waitForQuiet(database.db);
  const m = await measure(server.url, request, options.duration, options.connections, server.pid);
  const codes = Object.entries(m.statusCodes)
    .map(([c, n]) => `${n}×${c}`)
    .join(' ');
  const other = m.foreignCores === undefined ? '' : `, other programs ${m.foreignCores.toFixed(2)} cores`;
  const cpuCost = m.cpu
    ? `  CPU ms/req: ${m.cpu.serverMs.toFixed(2)} server, ${m.cpu.databaseMs.toFixed(2)} database, ` +
      `${m.cpu.loadGeneratorMs.toFixed(2)} load generator, ${m.cpu.machineMs.toFixed(2)} machine`
    : '';
  console.log(
    `  ${server.name.padEnd(10)} ${Math.round(m.requestsPerSecond).toString().padStart(6)} req/s  p50 ${m.p50} ms  p99 ${m.p99} ms${cpuCost}  (${codes || 'no responses'}${other})`,
  );
  return m;
}

/** The cursor the service would put in `next` after the first `depth` posts in its default order. */
async function cursorAfter(db: BenchDatabase['db'], depth: number): Promise<string> {
  const row = await db<{ created_at: string; id: number }>('posts')
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .offset(depth - 1)
    .first('created_at', 'id');
  return encodeCursor(await getSecret(db, 'cursor'), 'n', [row!.created_at, row!.id], fingerprint('posts', {}, []));
}

async function runScenarios(database: BenchDatabase, options: BenchOptions): Promise<ScenarioResult[]> {
  const [services, baseline] = await startAll(database, options, options.workers);
  const cursorDepth = Math.floor(database.rows / 2);
  const ctx: ScenarioContext = {
    rows: database.rows,
    created: { from: database.rows + 1, to: database.rows },
    cursorDepth,
    deepCursor: await cursorAfter(database.db, cursorDepth),
  };
  const results: ScenarioResult[] = [];
  try {
    for (const scenario of SCENARIOS) {
      if (options.only.length && !options.only.includes(scenario.name)) continue;
      if (scenario.name === 'patch' && ctx.created.to < ctx.created.from) {
        await createForPatch(database);
        ctx.created.to = await maxId(database);
      }
      console.log(`${scenario.title}: ${scenario.shown(ctx)}`);
      const measured: Measurement[] = [];
      for (const service of services) measured.push(await drive(service, scenario.request(ctx), database, options));
      const b = await drive(baseline, scenario.request(ctx), database, options);
      results.push({
        title: scenario.title,
        shown: scenario.shown(ctx),
        service: measured[0],
        baseline: b,
        workers: options.workers.map((workers, i) => ({ workers, service: measured[i] })),
      });
      ctx.created.to = await maxId(database);
    }
  } finally {
    for (const service of services) await service.stop();
    await baseline.stop();
    await removeWrites(database.db, database.rows);
  }
  return results;
}

async function maxId(database: BenchDatabase): Promise<number> {
  const [{ max }] = await database.db('posts').max({ max: 'id' });
  return Number(max);
}

/** When patch runs without create, it still needs posts of its own to edit. */
async function createForPatch(database: BenchDatabase): Promise<void> {
  const stamp = dbTimestamp();
  const rows = Array.from({ length: 1000 }, () => ({
    title: 'For patch',
    content: 'c',
    author: 'bench',
    created_at: stamp,
    updated_at: stamp,
  }));
  await database.db.batchInsert('posts', rows, 500);
}

async function runScale(options: BenchOptions, seeded: string[]): Promise<ScaleResult[]> {
  const results: ScaleResult[] = [];
  const list = SCENARIOS.find((s) => s.name === 'list')!;
  for (const rows of options.scale) {
    const database = await open(databaseUrlFor(options.databaseUrl, rows), rows, seeded);
    try {
      console.log(`list page 1 at ${rows.toLocaleString('en')} posts`);
      const [service, baseline] = await startBoth(database, options);
      const ctx: ScenarioContext = { rows, created: { from: rows + 1, to: rows }, cursorDepth: 0, deepCursor: '' };
      try {
        const s = await drive(service, list.request(ctx), database, options);
        const b = await drive(baseline, list.request(ctx), database, options);
        results.push({ rows, service: s, baseline: b, queries: await listPageQueryTimes(database.db) });
      } finally {
        await service.stop();
        await baseline.stop();
      }
    } finally {
      await database.db.destroy();
    }
  }
  return results;
}

async function open(url: string, rows: number, seeded: string[]): Promise<BenchDatabase> {
  const database = await prepareDatabase(url, rows);
  if (database.seedSeconds) seeded.push(`${rows.toLocaleString('en')} posts in ${database.seedSeconds.toFixed(1)} s`);
  return database;
}

async function main(): Promise<void> {
  const parsed = parseOptions(process.argv.slice(2));
  if (parsed === 'help') return void console.log(USAGE);
  const options = parsed;
  if (options.cluster) return runClusterBench(options, options.out);
  if (options.search) return runSearchBench(options);
  if (options.soak) return runSoak(options);
  if (options.auth) return runAuthBench(options);
  // The machine may be shared: its load beside the figures says how far to trust them.
  const loadAtStart = loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
  const seeded: string[] = [];
  const database = await open(databaseUrlFor(options.databaseUrl, options.rows), options.rows, seeded);
  let scenarios: ScenarioResult[];
  let dbVersion: string;
  try {
    dbVersion = await serverVersion(database.db);
    scenarios = await runScenarios(database, options);
  } finally {
    await database.db.destroy();
  }
  const scale = options.only.length ? [] : await runScale(options, seeded);

  const cpu = cpus();
  const report: Report = {
    when: new Date(),
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    rows: options.rows,
    duration: options.duration,
    warmup: options.warmup,
    connections: options.connections,
    load: loadAtStart,
    cores: cpu.length,
    machine:
      `${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown CPU'}), ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Linux ${release()}; ` +
      `Node ${process.version}; database ${dbVersion}; autocannon ${autocannonPackage.version}; load generator, servers and database share the machine`,
    seeded,
    scenarios,
    scale,
  };
  const markdown = renderReport(report);
  console.log(`\n${markdown}\n`);
  const out = resolve(ROOT, options.out);
  writeReport(out, markdown);
  console.log(`report written to ${out}`);

  // 503s are the service shedding load, a finding for the report; anything else is breakage.
  const failures = [...scenarios, ...scale].flatMap((r) => [r.service, r.baseline]).reduce((n, m) => n + m.failures, 0);
  const silent = [...scenarios, ...scale].flatMap((r) => [r.service, r.baseline]).some((m) => m.requests === 0);
  if (failures || silent || !scenarios.length) {
    console.error(
      failures
        ? `${failures} requests failed; see the report`
        : silent
          ? 'a server answered nothing in a whole measurement'
          : 'no scenario ran',
    );
    process.exit(1);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`bench failed: ${err instanceof OptionsError ? `${err.message}\n${USAGE}` : String((err as Error)?.stack ?? err)}`);
    process.exit(1);
  },
);

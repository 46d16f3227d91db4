// `npm run bench -- --cluster`: throughput of get and create through a 3-node Galera cluster
// against one server with the same settings (both of their own, started here and stopped
// after), and what read-your-writes (wsrep_sync_wait) costs. One service instance drives each;
// on the cluster it is given all three nodes, so its connections are spread over them.
import { cpus, loadavg, release, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type GaleraCluster, startCluster } from '../cluster/galera';
import { prepareDatabase } from './database';
import type { BenchOptions } from './options';
import { measure, type Measurement, SCENARIOS, type ScenarioContext } from './scenarios';
import { ROOT, startServer } from './servers';

const DATABASE = 'records_bench';

interface Target {
  title: string;
  cluster: GaleraCluster;
  url: string;
  env?: Record<string, string>;
}

export async function runClusterBench(options: BenchOptions, out: string): Promise<void> {
  const started: GaleraCluster[] = [];
  try {
    console.log('starting one server and a 3-node Galera cluster of their own...');
    const single = await startCluster({ size: 1, galera: false });
    started.push(single);
    const cluster = await startCluster();
    started.push(cluster);
    const targets: Target[] = [
      { title: 'one server', cluster: single, url: single.nodeUrl(0, DATABASE) },
      { title: '3-node cluster', cluster, url: cluster.url(DATABASE) },
      {
        title: '3-node cluster, wsrep_sync_wait=0 (no read-your-writes)',
        cluster,
        url: cluster.url(DATABASE),
        env: { DB_WSREP_SYNC_WAIT: '0' },
      },
    ];
    const rows = new Map<string, Record<string, Measurement>>();
    for (const target of targets) {
      const database = await prepareDatabase(target.url, options.rows);
      const ctx: ScenarioContext = {
        rows: options.rows,
        created: { from: options.rows + 1, to: options.rows },
        cursorDepth: 0,
        deepCursor: '',
      };
      const server = await startServer('service', 'src/main.ts', { DATABASE_URL: target.url, ...target.env });
      const results: Record<string, Measurement> = {};
      try {
        for (const name of ['get', 'create']) {
          const scenario = SCENARIOS.find((s) => s.name === name)!;
          if (options.warmup > 0) await measure(server.url, scenario.request(ctx), options.warmup, options.connections);
          const m = await measure(server.url, scenario.request(ctx), options.duration, options.connections);
          const codes = Object.entries(m.statusCodes)
            .map(([c, k]) => `${k}×${c}`)
            .join(' ');
          console.log(`${target.title}, ${name}: ${Math.round(m.requestsPerSecond)} req/s p50 ${m.p50} ms p99 ${m.p99} ms (${codes})`);
          results[name] = m;
        }
      } finally {
        await server.stop();
        await database.db.destroy();
      }
      rows.set(target.title, results);
    }
    const markdown = render(options, rows);
    console.log(`\n${markdown}`);
    const file = resolve(ROOT, out);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${markdown}\n`);
    console.log(`written to ${out}`);
  } finally {
    for (const c of started) await c.destroy();
  }
}

function render(options: BenchOptions, rows: Map<string, Record<string, Measurement>>): string {
  const base = rows.get('one server')!;
  const cell = (m: Measurement, b: Measurement) =>
    `${Math.round(m.requestsPerSecond)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms (${(m.requestsPerSecond / b.requestsPerSecond).toFixed(2)}×)` +
    (m.shed || m.failures ? `, ${m.shed} shed, ${m.failures} failed` : '');
  const cpu = cpus();
  return [
    `## Cluster: get and create through a 3-node Galera cluster against one server`,
    '',
    `\`npm run bench -- --cluster\`, ${new Date().toISOString()}: ${options.rows.toLocaleString('en')} posts, ${options.connections} connections, ` +
      `${options.duration} s measured after ${options.warmup} s of warm-up. One service instance (pool of 10) per target; every ` +
      `database server is MariaDB 10.11 with a 32 MiB buffer pool, on this machine (${cpu.length} cores, ` +
      `${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}), as are the service and the load generator; load average at the end ${loadavg()
        .map((l) => l.toFixed(2))
        .join(', ')}.`,
    '',
    '| target | get by id | create |',
    '|---|---|---|',
    ...[...rows].map(([title, r]) => `| ${title} | ${cell(r.get, base.get)} | ${cell(r.create, base.create)} |`),
  ].join('\n');
}

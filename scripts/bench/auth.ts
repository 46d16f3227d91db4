// `npm run bench -- --auth`: the two figures of scoped tokens and bulk writes. Bulk create of
// 1,000 posts in one request against 1,000 single creates over 16 connections (target: 10x
// faster), and get by id served open and with a scoped token, side by side and alternated, so
// that the token check's cost can be told from the run's noise. On MySQL or SQLite.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { newToken } from '../../src/auth/tokensFile';
import { parseDatabaseUrl } from '../../src/config';
import { ensureMysqlDatabase } from '../../src/db/connection';
import { type BenchOptions, databaseUrlFor } from './options';
import { writeReport } from './report';
import { measure, type Measurement } from './scenarios';
import { ROOT, type RunningServer, startServer } from './servers';

const BATCH = 1000;
const SINGLE_CONNECTIONS = 16;
const ROUNDS = 3;

const post = (n: number) => ({ title: `Bulk bench ${n}`, content: `Post number ${n} of the bulk benchmark.`, author: 'bench' });

/** Seconds for 1,000 creates, one request each, over 16 connections. */
async function singles(url: string, headers: Record<string, string>): Promise<number> {
  let n = 0;
  const started = process.hrtime.bigint();
  // autocannon ends a run with `amount` on its once-a-second tick: the last answer's time is kept.
  let last = started;
  const result = await autocannon({
    url,
    connections: SINGLE_CONNECTIONS,
    amount: BATCH,
    requests: [
      {
        method: 'POST',
        path: '/api/posts/',
        headers,
        setupRequest: (req) => ({ ...req, body: JSON.stringify(post(++n)) }),
        onResponse: () => {
          last = process.hrtime.bigint();
        },
      },
    ],
  });
  const seconds = Number(last - started) / 1e9;
  if (result.non2xx || result.errors || result['2xx'] !== BATCH) throw new Error(`single creates: ${result['2xx']} of ${BATCH} created`);
  return seconds;
}

/** Seconds for 1,000 creates in one bulk request; the created ids. */
async function bulk(url: string, headers: Record<string, string>): Promise<{ seconds: number; ids: number[] }> {
  const body = JSON.stringify(Array.from({ length: BATCH }, (_, i) => post(i)));
  const started = process.hrtime.bigint();
  const res = await fetch(`${url}/api/posts/bulk/`, { method: 'POST', headers, body });
  const answer = (await res.json()) as { results: { id: number }[] };
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (res.status !== 201) throw new Error(`bulk create answered ${res.status}`);
  return { seconds, ids: answer.results.map((r) => r.id) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (s: number) => `${Math.round(s * 1000).toLocaleString('en')} ms`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

export async function runAuthBench(options: BenchOptions): Promise<void> {
  const url = databaseUrlFor(options.databaseUrl, 0, '_auth');
  const config = parseDatabaseUrl(url);
  await ensureMysqlDatabase(config);
  const dialect = config.client;
  const dir = mkdtempSync(join(tmpdir(), 'records-bench-auth-'));
  const { entry, token } = newToken('bench-reader', ['posts:read', 'posts:write']);
  const tokensFile = join(dir, 'tokens.json');
  writeFileSync(tokensFile, JSON.stringify({ version: 1, tokens: [entry] }));
  const json = { 'content-type': 'application/json' };
  const scoped = { ...json, authorization: `Bearer ${token}` };
  const workers = String(options.workers[0]);
  const loadAtStart = load();

  const servers: RunningServer[] = [];
  try {
    const open = await startServer('open', 'built', { DATABASE_URL: url, WEB_CONCURRENCY: workers });
    servers.push(open);
    const withToken = await startServer('token', 'built', { DATABASE_URL: url, WEB_CONCURRENCY: workers, TOKENS_FILE: tokensFile });
    servers.push(withToken);

    const bulkTimes: number[] = [];
    const singleTimes: number[] = [];
    let ids: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const b = await bulk(open.url, json);
      bulkTimes.push(b.seconds);
      ids = b.ids;
      singleTimes.push(await singles(open.url, json));
      console.log(`round ${round + 1}: bulk ${ms(b.seconds)}, 1,000 single creates ${ms(singleTimes.at(-1)!)}`);
    }
    const scopedBulk = (await bulk(withToken.url, scoped)).seconds;

    const get = (headers: Record<string, string>): autocannon.Request => ({
      method: 'GET',
      headers,
      setupRequest: (req) => ({ ...req, path: `/api/posts/${ids[Math.floor(Math.random() * ids.length)]}/` }),
    });
    const gets: { name: string; m: Measurement }[] = [];
    for (let round = 0; round < 2; round++) {
      for (const [name, server, headers] of [
        ['no token (open)', open, {}],
        ['scoped token (posts:read)', withToken, { authorization: `Bearer ${token}` }],
      ] as const) {
        await measure(server.url, get(headers), options.warmup, options.connections);
        const m = await measure(server.url, get(headers), options.duration, options.connections, server.pid);
        if (m.failures) throw new Error(`get by id (${name}): ${m.failures} requests failed`);
        gets.push({ name, m });
        console.log(`get by id, ${name}: ${Math.round(m.requestsPerSecond)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms`);
      }
    }

    const b = median(bulkTimes);
    const s = median(singleTimes);
    const lines = [
      `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${dialect === 'mysql' ? 'MySQL' : 'SQLite'}: ` +
        `\`npm run bench -- ${process.argv.slice(2).join(' ')}\`; the built service, \`WEB_CONCURRENCY=${workers}\`; ` +
        `load average ${loadAtStart} at the start, ${load()} at the end (1, 5, 15 min; the machine is shared).`,
      '',
      '| what | figure |',
      '|---|---|',
      `| 1,000 posts, one bulk request (median of ${ROUNDS}) | ${ms(b)} (${bulkTimes.map(ms).join(', ')}) |`,
      `| 1,000 posts, single creates over ${SINGLE_CONNECTIONS} connections (median of ${ROUNDS}) | ${ms(s)} (${singleTimes.map(ms).join(', ')}) |`,
      `| bulk is faster by | ${(s / b).toFixed(1)}x (target: 10x) |`,
      `| 1,000 posts, one bulk request with a scoped token | ${ms(scopedBulk)} |`,
      '',
      `Get by id, ${options.connections} connections, ${options.duration} s each after ${options.warmup} s of warm-up, in the order run:`,
      '',
      '| token | req/s | p50 ms | p99 ms | server CPU ms/req |',
      '|---|---:|---:|---:|---:|',
      ...gets.map(
        ({ name, m }) =>
          `| ${name} | ${Math.round(m.requestsPerSecond)} | ${m.p50} | ${m.p99} | ${m.cpuMsPerRequest === undefined ? '-' : m.cpuMsPerRequest.toFixed(3)} |`,
      ),
    ];
    const markdown = lines.join('\n');
    console.log(`\n${markdown}\n`);
    const out = resolve(ROOT, options.out);
    writeReport(out, markdown, `bench-auth-${dialect}`);
    console.log(`report written to ${out}`);
  } finally {
    for (const server of servers) await server.stop();
  }
}

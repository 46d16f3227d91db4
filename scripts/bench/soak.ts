// `npm run bench -- --soak`: the built service under a steady mixed load (reads, searches, writes,
// exports and bad requests) for `--duration` seconds, on MySQL or SQLite, watching what a leak
// would show: the service's memory (RSS, heap), its open descriptors, p99 a minute, and every
// answer that is not 2xx, with idle and half-open connections open beside it. Targets: memory
// flat (end at most 10% above the middle), no 5xx, no descriptor growth, and SIGTERM ending the
// service with exit 0 in seconds while those connections are open. The report says whether each
// was met; a 5xx, a slow or failed stop, or a harness failure exits 1.
import { migrate } from '../../src/schema';
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname, resolve } from 'node:path';
import { parseDatabaseUrl } from '../../src/config';
import { ensureMysqlDatabase, isMysql, openDb, type Db } from '../../src/db/connection';
import { rowCount, seedCollection } from '../seed/index';
import type { BenchOptions } from './options';
import { ROOT, startServer } from './servers';

const MB = 1024 * 1024;
/** The heap's figure at a point is the lowest of this many samples nearest it (a minute at 5 s). */
const HEAP_SAMPLES = 13;

/** One sample of the service's processes: summed RSS and descriptors, and the heap /metrics reports. */
interface Sample {
  at: number;
  rss: number;
  heap: number;
  fds: number;
}

interface Tally {
  latencies: number[][];
  statuses: Map<string, number>;
  requests: number;
  /** Requests that got no HTTP answer at all (reset, timeout). */
  failures: number;
}

const MINUTE_MS = 60_000;
/** How soon SIGTERM must end the service, idle connections open (its requests in flight finish first). */
const STOP_TARGET_MS = 3000;
/** Descriptors that open and close with the load (sockets, pool connections) without a leak. */
const FD_SLACK = 2;

/** The service's processes: the primary and, with WEB_CONCURRENCY > 1, its workers. */
function processTree(pid: number): number[] {
  const out = [pid];
  for (const task of safeList(`/proc/${pid}/task`)) {
    const children = safeRead(`/proc/${pid}/task/${task}/children`).trim();
    for (const child of children ? children.split(/\s+/) : []) out.push(...processTree(Number(child)));
  }
  return out;
}

function safeList(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function rssOf(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(safeRead(`/proc/${pid}/status`))?.[1] ?? 0) * 1024;
}

/** The heap in use as the service's own /metrics reports it, summed over its workers. */
async function heapOf(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const m of text.matchAll(/^nodejs_heap_size_used_bytes(?:\{[^}]*\})? ([0-9.e+]+)$/gm)) sum += Number(m[1]);
  return sum;
}

async function sample(pid: number, url: string, started: number): Promise<Sample> {
  const pids = processTree(pid);
  return {
    at: Date.now() - started,
    rss: pids.reduce((n, p) => n + rssOf(p), 0),
    fds: pids.reduce((n, p) => n + safeList(`/proc/${p}/fd`).length, 0),
    heap: await heapOf(url),
  };
}

const randomInt = (from: number, to: number) => from + Math.floor(Math.random() * (to - from + 1));
const pick = <T>(items: readonly T[]) => items[Math.floor(Math.random() * items.length)];

interface Call {
  kind: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

const post = (n: number) => JSON.stringify({ title: `soak ${n}`, content: `soak river lantern ${n}`, author: 'soak' });

/** The requests that the service must refuse with a 4xx: each once in a while, in turn. */
const BAD: ((rows: number) => Call)[] = [
  () => ({ kind: 'bad', method: 'POST', path: '/api/posts/', body: '{"title":' }),
  () => ({ kind: 'bad', method: 'POST', path: '/api/posts/', body: Buffer.from('{"title":"\xff","content":"c","author":"a"}', 'latin1') }),
  () => ({ kind: 'bad', method: 'POST', path: '/api/posts/', body: '{"title":"a","title":"b","content":"c","author":"a"}' }),
  () => ({ kind: 'bad', method: 'POST', path: '/api/posts/', body: `{"title":"${'x'.repeat(2 * MB)}"}` }),
  () => ({ kind: 'bad', method: 'POST', path: '/api/posts/', headers: { 'content-type': 'text/plain' }, body: 'x' }),
  (rows) => ({ kind: 'bad', method: 'GET', path: `/api/posts/0${randomInt(1, rows)}/` }),
  (rows) => ({ kind: 'bad', method: 'PATCH', path: `/api/posts/${randomInt(1, rows)}/`, headers: { 'if-match': 'garbage' }, body: '{}' }),
  () => ({ kind: 'bad', method: 'GET', path: '/api/posts/?page=0' }),
  () => ({ kind: 'bad', method: 'GET', path: '/api/nope/' }),
  () => ({ kind: 'bad', method: 'GET', path: '/api/posts/?search=%FF' }),
];

/** The mix: mostly reads, a search in six, writes on the soak's own posts, and bad requests. */
function nextCall(rows: number, created: number[], turn: number): Call {
  const r = Math.random();
  if (r < 0.3) return { kind: 'get', method: 'GET', path: `/api/posts/${randomInt(1, rows)}/` };
  if (r < 0.45) return { kind: 'list', method: 'GET', path: `/api/posts/?page=${randomInt(1, 50)}` };
  if (r < 0.5) return { kind: 'cursor', method: 'GET', path: '/api/posts/?cursor=&ordering=-updated_at' };
  if (r < 0.65)
    return { kind: 'search', method: 'GET', path: `/api/posts/?search=${pick(['river', 'lantern', 'river%20lantern', 'soak'])}` };
  if (r < 0.75) return { kind: 'create', method: 'POST', path: '/api/posts/', body: post(turn) };
  if (r < 0.85 && created.length)
    return { kind: 'patch', method: 'PATCH', path: `/api/posts/${pick(created)}/`, body: JSON.stringify({ title: `patched ${turn}` }) };
  if (r < 0.88 && created.length > 100) return { kind: 'delete', method: 'DELETE', path: `/api/posts/${created.shift()}/` };
  if (r < 0.9)
    return {
      kind: 'export',
      method: 'GET',
      path: '/api/posts/export/?author=soak',
      headers: { accept: pick(['text/csv', 'application/x-ndjson']) },
    };
  return BAD[turn % BAD.length](rows);
}

function send(agent: Agent, base: URL, call: Call): Promise<{ status: number; body: string }> {
  return new Promise((resolveCall, reject) => {
    const headers: Record<string, string> = { ...call.headers };
    if (call.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      headers['content-length'] = String(Buffer.byteLength(call.body));
    }
    const req = httpRequest(
      { agent, host: base.hostname, port: base.port, method: call.method, path: call.path, headers, timeout: 30_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolveCall({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer in 30 s')));
    req.on('error', reject);
    req.end(call.body);
  });
}

/** A body whose chunked encoding breaks, on a socket of its own: answered 400 at once. */
function brokenChunk(base: URL): Promise<number> {
  return new Promise((resolveStatus) => {
    const socket = connect(Number(base.port), base.hostname, () =>
      socket.write(
        'POST /api/posts/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      ),
    );
    let text = '';
    const timer = setTimeout(() => socket.destroy(), 5000);
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolveStatus(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0));
    });
  });
}

/** How many connections of each kind stay open beside the load: idle, and half-open. */
const IDLE_CLIENTS = 20;

/**
 * Connections that send nothing (idle) or half a request's headers (half-open) and then wait,
 * kept at IDLE_CLIENTS each: one the service closes is opened again a second later. They are
 * still open when the service is stopped, which must close them at once and exit 0.
 */
function idleClients(base: URL): { closedByService: () => number; open: () => number; end(): void } {
  const sockets = new Set<Socket>();
  let closedByService = 0;
  let ended = false;
  const open = (halfOpen: boolean) => {
    if (ended) return;
    const socket = connect(Number(base.port), base.hostname, () => {
      if (halfOpen) socket.write('GET /api/posts/ HTTP/1.1\r\nHost: x\r\nX-Half: ');
    });
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      if (ended) return;
      closedByService++;
      setTimeout(() => open(halfOpen), 1000).unref();
    });
  };
  for (let i = 0; i < IDLE_CLIENTS; i++) [false, true].forEach(open);
  return {
    closedByService: () => closedByService,
    open: () => sockets.size,
    end() {
      ended = true;
      for (const s of sockets) s.destroy();
    },
  };
}

function p99(values: number[]): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

/** Fills the database with `rows` generated posts unless it holds them, and removes the soak's own. */
async function prepare(url: string, rows: number): Promise<Db> {
  const config = parseDatabaseUrl(url);
  if (config.client === 'sqlite') mkdirSync(dirname(resolve(config.filename)), { recursive: true });
  await ensureMysqlDatabase(config);
  const db = openDb(config);
  await migrate(db);
  await db('posts').where('id', '>', rows).delete();
  if ((await rowCount(db, 'posts')) !== rows) {
    console.log(`seeding ${rows.toLocaleString('en')} posts`);
    await seedCollection(db, 'posts', rows, { reset: true });
  }
  return db;
}

export async function runSoak(options: BenchOptions): Promise<void> {
  const seconds = options.duration;
  const rate = options.rate;
  const url = options.databaseUrl;
  const loadBefore = loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
  const db = await prepare(url, options.rows);
  const dialect = isMysql(db) ? 'MySQL' : 'SQLite';
  await db.destroy();

  const workers = options.workers[0];
  const service = await startServer('service', 'built', { DATABASE_URL: url, WEB_CONCURRENCY: String(workers) });
  const base = new URL(service.url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const tally: Tally = { latencies: [], statuses: new Map(), requests: 0, failures: 0 };
  const samples: Sample[] = [];
  const created: number[] = [];
  const started = Date.now();
  const until = started + seconds * 1000;
  let turn = 0;
  let serviceGone = false;
  let stopping = false;
  void service.exited.then(() => (serviceGone = !stopping));

  const count = (status: string) => tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
  const idle = idleClients(base);
  let closedDuringRun: number | undefined;
  let stopped: { ms: number; openAtStop: number; code: number | null; signal: NodeJS.Signals | null } | undefined;
  try {
    // Every 5 s (a tenth of a short run); the first after a tenth of the run, once the load's
    // sockets and the pool's connections are open, so that start compares like with like.
    const sampleMs = Math.min(5000, (seconds * 1000) / 10);
    const prober = setInterval(
      () => void brokenChunk(base).then((status) => count(`${status || 'no answer'} (broken chunked body)`)),
      Math.min(10_000, (seconds * 1000) / 3),
    );
    const sampler = setInterval(() => {
      sample(service.pid, service.url, started).then(
        (s) => samples.push(s),
        () => undefined,
      );
    }, sampleMs);
    // Each connection sends at its share of the rate, so that the load stays steady (and the
    // shared machine keeps cores for others) rather than as fast as the service answers.
    const interval = (1000 * options.connections) / rate;
    await Promise.all(
      Array.from({ length: options.connections }, async () => {
        while (Date.now() < until && !serviceGone) {
          const t0 = Date.now();
          const call = nextCall(options.rows, created, turn++);
          try {
            const { status, body } = await send(agent, base, call);
            const minute = Math.floor((t0 - started) / MINUTE_MS);
            (tally.latencies[minute] ??= []).push(Date.now() - t0);
            tally.requests++;
            if (status < 200 || status > 299) count(`${status} (${call.kind})`);
            if (call.kind === 'create' && status === 201) created.push((JSON.parse(body) as { id: number }).id);
          } catch (err) {
            tally.failures++;
            count(`no answer: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (${call.kind})`);
          }
          const wait = interval - (Date.now() - t0);
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
      }),
    );
    clearInterval(sampler);
    clearInterval(prober);
    samples.push(await sample(service.pid, service.url, started));
  } finally {
    agent.destroy();
    stopping = true;
    // Stopped with the idle and half-open connections still open: shutdown must not wait for them.
    const openAtStop = idle.open();
    // Counted before the stop, which closes every one of them.
    closedDuringRun = idle.closedByService();
    const t0 = Date.now();
    const exit = await service.stop();
    stopped = { ms: Date.now() - t0, openAtStop, ...exit };
    idle.end();
  }
  const loadAfter = loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

  const steady = samples.filter((s) => s.at >= (seconds * 1000) / 10 - 100);
  const first = steady[0];
  const last = steady[steady.length - 1];
  const middle = steady.reduce((best, s) => (Math.abs(s.at - last.at / 2) < Math.abs(best.at - last.at / 2) ? s : best), first);
  // A leak grows: memory that a collection just gave back is flat too.
  const within = (end: number, mid: number) => end <= 1.1 * mid;
  // V8 frees old garbage in batches, so one sample may hold much of it: the lowest of the samples
  // nearest a point is nearer what the heap keeps alive, which a leak makes grow. As many at the
  // ends as in the middle: a window of time would hold half as many there, and read higher.
  const lowest = (at: Sample, of: (x: Sample) => number) =>
    Math.min(
      ...[...steady]
        .sort((a, b) => Math.abs(a.at - at.at) - Math.abs(b.at - at.at))
        .slice(0, HEAP_SAMPLES)
        .map(of),
    );
  const heapLow = (at: Sample) => lowest(at, (x) => x.heap);
  // RSS follows the heap's garbage (pages V8 holds until it collects), so it is read the same way.
  const rssLow = (at: Sample) => lowest(at, (x) => x.rss);
  // The lowest heap and RSS of each minute, so that a growth shows as a trend and not one reading.
  const minuteLows = (of: (x: Sample) => number) =>
    Array.from({ length: Math.ceil(seconds / 60) }, (_, m) => steady.filter((x) => Math.floor(x.at / MINUTE_MS) === m).map(of))
      .filter((xs) => xs.length)
      .map((xs) => (Math.min(...xs) / MB).toFixed(1));
  const [lowFirst, lowMiddle, lowLast] = [first, middle, last].map(heapLow);
  const firstHalfFds = Math.max(...steady.filter((s) => s.at <= last.at / 2).map((s) => s.fds));
  const fiveXX = [...tally.statuses.entries()].filter(([s]) => s.startsWith('5')).reduce((n, [, c]) => n + c, 0);
  const ok = (met: boolean) => (met ? 'met' : '**missed**');
  // The documented bound (docs/production.md) is SHUTDOWN_TIMEOUT_MS; idle connections must not use it.
  const stopMet = stopped?.code === 0 && stopped.ms <= STOP_TARGET_MS;
  const cpu = cpus();
  const lines = [
    `### Soak: ${dialect}, ${seconds} s${options.smoke ? ' (smoke)' : ''}`,
    '',
    `Command: \`npm run bench -- --soak --duration ${seconds} --rate ${rate} --connections ${options.connections} --rows ${options.rows} --database-url ${url}${workers > 1 ? ` --workers ${workers}` : ''}\``,
    `(after \`npm run build\`). ${new Date().toISOString()}; ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown CPU'}), ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Linux ${release()}, Node ${process.version}; the load generator, the service (WEB_CONCURRENCY=${workers}) and the database share the machine.`,
    `Load average (1, 5, 15 min) before: ${loadBefore}; after: ${loadAfter}.`,
    '',
    `${tally.requests.toLocaleString('en')} requests (${Math.round(tally.requests / seconds)}/s, mix: 30% get, 15% list, 5% cursor, 15% search, 10% create, 10% patch, 3% delete, 2% export, 10% bad; and a broken chunked body every ${Math.round(Math.min(10, seconds / 3))} s; beside them ${IDLE_CLIENTS} idle and ${IDLE_CLIENTS} half-open connections, ${closedDuringRun} of them closed by the service during the run and opened again), ${tally.failures} without an answer.`,
    '',
    '| | start | middle | end | target | |',
    '|---|---|---|---|---|---|',
    `| RSS, lowest of the ${HEAP_SAMPLES} samples nearest (MB) | ${(rssLow(first) / MB).toFixed(1)} | ${(rssLow(middle) / MB).toFixed(1)} | ${(rssLow(last) / MB).toFixed(1)} | end at most 10% above middle | ${ok(within(rssLow(last), rssLow(middle)))} |`,
    `| RSS, as sampled (MB) | ${(first.rss / MB).toFixed(1)} | ${(middle.rss / MB).toFixed(1)} | ${(last.rss / MB).toFixed(1)} | | |`,
    `| heap used, lowest of the ${HEAP_SAMPLES} samples nearest (MB) | ${(lowFirst / MB).toFixed(1)} | ${(lowMiddle / MB).toFixed(1)} | ${(lowLast / MB).toFixed(1)} | end at most 10% above middle | ${ok(within(lowLast, lowMiddle))} |`,
    `| heap used, as sampled (MB) | ${(first.heap / MB).toFixed(1)} | ${(middle.heap / MB).toFixed(1)} | ${(last.heap / MB).toFixed(1)} | (garbage not yet collected included) | |`,
    `| open descriptors | ${first.fds} | ${middle.fds} | ${last.fds} | end at most the first half's highest + ${FD_SLACK} (${firstHalfFds + FD_SLACK}) | ${ok(last.fds <= firstHalfFds + FD_SLACK)} |`,
    `| 5xx answers | | | ${fiveXX} | none | ${ok(fiveXX === 0)} |`,
    `| stop (SIGTERM) with ${stopped?.openAtStop ?? 0} idle and half-open connections open | | | exit ${stopped?.code ?? stopped?.signal} in ${stopped?.ms} ms | exit 0 within ${STOP_TARGET_MS} ms | ${ok(stopMet)} |`,
    '',
    `p99 a minute (ms): ${tally.latencies.map((l, i) => `${i + 1}: ${p99(l ?? [])}`).join(', ')}`,
    '',
    `Lowest a minute (MB): heap used ${minuteLows((x) => x.heap).join(', ')}; RSS ${minuteLows((x) => x.rss).join(', ')}`,
    '',
    `Answers not 2xx, by status (and request kind): ${
      [...tally.statuses.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([s, n]) => `${s} ${n}`)
        .join('; ') || 'none'
    }`,
    '',
  ];
  const markdown = lines.join('\n');
  console.log(`\n${markdown}`);
  const out = resolve(ROOT, options.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, markdown);
  console.log(`report written to ${out}`);
  if (fiveXX || tally.failures || serviceGone || tally.requests === 0 || !stopMet) {
    console.error(
      `soak failed: ${fiveXX} 5xx, ${tally.failures} requests without an answer${serviceGone ? ', the service exited' : ''}${stopMet ? '' : `, the stop took ${stopped?.ms} ms and exited ${stopped?.code ?? stopped?.signal}`}`,
    );
    process.exit(1);
  }
}

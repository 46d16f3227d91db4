// Worker processes (node:cluster, WEB_CONCURRENCY). The primary migrates, forks, replaces workers
// that die, relays signals, and holds what workers share: the rate limit's counts and the sum of
// their metrics. Each worker is the single-process service.
import cluster, { type Worker } from 'node:cluster';
import type { Readable, Writable } from 'node:stream';
import { AggregatorRegistry, Registry } from 'prom-client';
import { FLUSH_MS, type Logger } from './logger';

export const inWorker = cluster.isWorker;
/** cluster's id of this worker (1, 2, ...; a replacement gets the next), or undefined outside one. */
export const workerId = cluster.worker?.id;

type Message =
  | { type: 'records:ready'; port: number }
  | { type: 'records:start-failed'; message: string; config: boolean }
  | { type: 'records:metrics'; id: number }
  | { type: 'records:metrics-text'; id: number; text?: string; error?: string };

/** Workers that die before they listen, one after the other, before the service gives up. */
export const MAX_START_FAILURES = 3;
/**
 * How long the primary waits past SHUTDOWN_TIMEOUT_MS for workers that are exiting 1 by then:
 * longer than a worker's own wait for its last lines to reach stdout, so they are not cut.
 */
const EXIT_GRACE_MS = FLUSH_MS + 1000;

export interface Supervision {
  workers: number;
  shutdownTimeoutMs: number;
  logger: Logger;
  /** Called once, when every worker listens: the service's start-up log. */
  onListening(port: number): void;
  /** Prints the one line saying why the service cannot start, and exits 1. */
  failStart(message: string): never;
}

export function superviseWorkers(o: Supervision): void {
  const { logger } = o;
  countHitsForWorkers();
  const aggregator = new AggregatorRegistry();
  // stdout through the primary, whole lines at a time, so that workers' log lines never mix.
  cluster.setupPrimary({ stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const ready = new Set<number>();
  // Workers whose process has not exited. Not cluster.workers: a worker stays there until its
  // channel has closed too, which may come after its exit, and the last exit would then not
  // see an empty list (the primary ended without its "stopped" line).
  const live = new Map<number, Worker>();
  const relays = new Set<Promise<void>>();
  let announced = false;
  let startFailures = 0;
  let lastFailure = '';
  let stopping = false;
  let failed = false;

  const fork = () => {
    const worker = cluster.fork();
    live.set(worker.id, worker);
    logger.info({ worker: worker.id, pid: worker.process.pid }, 'worker started');
    relays.add(relayLines(worker.process.stdout!, process.stdout));
    worker.on('message', (m: Message) => onMessage(worker, m));
  };

  const onMessage = (worker: Worker, m: Message) => {
    if (m?.type === 'records:ready') {
      ready.add(worker.id);
      startFailures = 0;
      logger.info({ worker: worker.id, pid: worker.process.pid }, 'worker ready');
      if (!announced && ready.size === o.workers) {
        announced = true;
        o.onListening(m.port);
      }
    } else if (m?.type === 'records:start-failed') {
      lastFailure = m.message;
      // A bad configuration (a port in use, ...) fails the same way in every worker.
      if (m.config) giveUp(m.message);
    } else if (m?.type === 'records:metrics') {
      aggregator.clusterMetrics().then(
        (text) => worker.send({ type: 'records:metrics-text', id: m.id, text } satisfies Message),
        (err: Error) => worker.send({ type: 'records:metrics-text', id: m.id, error: err.message } satisfies Message),
      );
    }
  };

  let cleanExit = true;
  cluster.on('exit', (worker, code, signal) => {
    const wasReady = ready.delete(worker.id);
    live.delete(worker.id);
    if (stopping || failed) {
      // A worker stopped before it listened had taken no request; one that listened has drained.
      if (wasReady && code !== 0) cleanExit = false;
      if (live.size === 0) void finish();
      return;
    }
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    if (!wasReady && ++startFailures >= MAX_START_FAILURES) {
      return giveUp(
        `workers keep dying at start (${startFailures} in a row, the last with ${how})${lastFailure ? `: ${lastFailure}` : ''}`,
      );
    }
    logger.warn({ worker: worker.id, pid: worker.process.pid, code, signal, ready: wasReady }, 'worker exited; starting another');
    fork();
  });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping || failed) return;
    stopping = true;
    logger.info({ signal, workers: live.size, timeoutMs: o.shutdownTimeoutMs }, 'shutting down');
    for (const worker of live.values()) worker.process.kill('SIGTERM');
    setTimeout(() => {
      logger.error({ timeoutMs: o.shutdownTimeoutMs }, 'shutdown timed out; killing the workers left');
      for (const worker of live.values()) worker.process.kill('SIGKILL');
      process.exit(1);
    }, o.shutdownTimeoutMs + EXIT_GRACE_MS).unref();
    if (live.size === 0) void finish();
  };

  // Once every worker has exited: 0 when each of them did (each has drained its requests).
  const finish = async () => {
    await Promise.all(relays);
    if (failed) return;
    if (cleanExit) logger.info('stopped');
    else logger.error('a worker did not stop cleanly');
    // stdout is a pipe, written asynchronously: exit once the last line has left.
    process.stdout.write('', () => process.exit(cleanExit ? 0 : 1));
  };

  // The other workers are stopped as on SIGTERM (their requests answered), then the one line.
  function giveUp(message: string): void {
    if (failed) return;
    failed = true;
    const workers = [...live.values()];
    for (const worker of workers) worker.process.kill('SIGTERM');
    const exited = Promise.all(workers.map((w) => new Promise((r) => (w.isDead() ? r(null) : w.once('exit', r)))));
    const timeout = new Promise((r) => setTimeout(r, o.shutdownTimeoutMs + EXIT_GRACE_MS).unref());
    void Promise.race([exited.then(() => Promise.all(relays)), timeout]).then(() => o.failStart(message));
  }

  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  for (let i = 0; i < o.workers; i++) fork();
}

/**
 * The rate limit's counts for every worker (the primary side of cluster-memory-store 0.3's
 * protocol). Not that package's primary, which answers after an await with a record that later
 * increments have changed, counting a burst twice; here each answer is the count as incremented.
 */
function countHitsForWorkers(): void {
  const FROM = 'cluster-memory-store';
  type Request = { from?: string; command: string; args: unknown[]; requestId: number; prefix: string };
  const stores = new Map<string, { windowMs: number; hits: Map<string, { totalHits: number; resetTime: number }> }>();
  const count = (prefix: string, key: string, by: number) => {
    const store = stores.get(prefix)!;
    const now = Date.now();
    let client = store.hits.get(key);
    if (!client || client.resetTime <= now) store.hits.set(key, (client = { totalHits: 0, resetTime: now + store.windowMs }));
    client.totalHits = Math.max(0, client.totalHits + by);
    return { totalHits: client.totalHits, resetTime: new Date(client.resetTime) };
  };
  cluster.on('message', (worker, m: Request) => {
    if (m?.from !== FROM) return;
    if (m.command === 'init' && !stores.has(m.prefix)) {
      const store = {
        windowMs: (m.args[0] as { windowMs: number }).windowMs,
        hits: new Map<string, { totalHits: number; resetTime: number }>(),
      };
      stores.set(m.prefix, store);
      // Forget clients whose window has ended.
      setInterval(() => {
        const now = Date.now();
        for (const [key, c] of store.hits) if (c.resetTime <= now) store.hits.delete(key);
      }, store.windowMs).unref();
    }
    if (!stores.has(m.prefix)) return;
    const key = String(m.args[0]);
    const result =
      m.command === 'increment'
        ? count(m.prefix, key, 1)
        : m.command === 'decrement'
          ? void count(m.prefix, key, -1)
          : m.command === 'resetKey'
            ? void stores.get(m.prefix)!.hits.delete(key)
            : undefined;
    worker.send({ requestId: m.requestId, result, from: FROM, prefix: m.prefix });
  });
}

/** Copies a worker's stdout to ours a whole number of lines at a time; resolves at its end. */
function relayLines(from: Readable, to: Writable): Promise<void> {
  let rest: Buffer | undefined;
  from.on('data', (chunk: Buffer) => {
    const data = rest ? Buffer.concat([rest, chunk]) : chunk;
    const end = data.lastIndexOf(10);
    if (end === -1) return void (rest = data);
    to.write(data.subarray(0, end + 1));
    rest = end + 1 < data.length ? data.subarray(end + 1) : undefined;
  });
  return new Promise((resolve) =>
    from.once('close', () => {
      if (rest) to.write(rest);
      resolve();
    }),
  );
}

/** In a worker: tells the primary that it listens on `port`. */
export function reportReady(port: number): void {
  process.send?.({ type: 'records:ready', port } satisfies Message);
}

/** In a worker: tells the primary why it cannot start (the primary prints the one line). */
export function reportStartFailure(message: string, config: boolean): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send || !process.connected) return resolve();
    process.send({ type: 'records:start-failed', message, config } satisfies Message, undefined, {}, () => resolve());
  });
}

const METRICS_TIMEOUT_MS = 5000;
let metricsRequests = 0;

/**
 * In a worker: registers the registries that the primary sums across workers, and returns a
 * registry whose text is that sum (what /metrics serves), asked of the primary on each scrape.
 */
export function clusterRegistry(local: Registry[]): Registry {
  new AggregatorRegistry(); // answers the primary's requests for this worker's figures
  AggregatorRegistry.setRegistries(local);
  return new ClusterSum();
}

class ClusterSum extends Registry {
  override metrics(): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const id = ++metricsRequests;
      const onMessage = (m: Message) => {
        if (m?.type !== 'records:metrics-text' || m.id !== id) return;
        clearTimeout(timer);
        process.off('message', onMessage);
        if (m.error !== undefined) reject(new Error(`metrics from the workers: ${m.error}`));
        else resolve(m.text ?? '');
      };
      const timer = setTimeout(() => {
        process.off('message', onMessage);
        reject(new Error('metrics from the workers: no answer from the primary'));
      }, METRICS_TIMEOUT_MS);
      process.on('message', onMessage);
      process.send!({ type: 'records:metrics', id } satisfies Message);
    });
  }
}

// The service (or the benchmark's baseline) as a child process: the one way that the tests, the
// Arazzo runner (scripts/respect.mjs) and the benchmark start it. Node runs it directly, with no
// npm or npx wrapper that would add its own lines to stderr or stand between it and its signals.
import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { staleBuild } from '../../src/buildStamp';

export const ROOT = resolve(__dirname, '../..');

/**
 * What runs: `built` is `node dist/main.js`, what `npm start` runs in production (build it with
 * `npm run build`); `source` is src/main.ts through tsx's loader, no build needed; any other
 * value is a TypeScript file under ROOT, run through tsx (the benchmark's baseline).
 */
export type Entry = 'built' | 'source' | (string & {});

export interface ServiceOptions {
  entry: Entry;
  /** The child's whole environment: nothing of this process's is passed on unless given here. */
  env: NodeJS.ProcessEnv;
  /** Options for node itself, such as `--cpu-prof`. */
  nodeArgs?: string[];
  /**
   * Stop keeping stdout once the `listening` line came (it is still read, so that the child
   * never blocks on a full pipe): under a benchmark the service logs a line per request.
   */
  forgetAfterStart?: boolean;
}

export interface ServiceProcess {
  child: ChildProcess;
  pid: number;
  /** The JSON lines of stdout (the log), parsed, as they arrive; other lines are only in stdout(). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any JSON the child logs; tests read the fields they assert
  lines: Record<string, any>[];
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM (or the signal given), then SIGKILL if it is still running after killAfterMs. */
  stop(signal?: NodeJS.Signals, killAfterMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface RunningService extends ServiceProcess {
  /** `http://host:port`, without a trailing slash. */
  url: string;
  port: number;
}

/** The environment a child starts from when the caller's own variables must not leak into it. */
export function minimalEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
}

/**
 * Node's options in `npm start` (package.json), which the `built` entry runs with too, so that
 * tests and benchmarks run what users start. None today: an export of 1,000,000 posts stays
 * under 140 MB with Node's defaults, and `--optimize-for-size`, smaller still, doubles the CPU
 * per response (BENCHMARKS.md, "Exports at 1,000,000 posts"): the README's option for small hosts.
 */
export const START_NODE_OPTIONS: string[] = [];

function nodeArguments(entry: Entry): string[] {
  if (entry === 'built') {
    assertBuilt();
    return [...START_NODE_OPTIONS, join(ROOT, 'dist', 'main.js')];
  }
  return ['--import', 'tsx', entry === 'source' ? join(ROOT, 'src', 'main.ts') : resolve(ROOT, entry)];
}

/** A missing or stale dist/ would run (or measure) other code than src/ holds: refuse it, as the service itself does. */
export function assertBuilt(): void {
  const stale = staleBuild(ROOT);
  if (stale) throw new Error(stale);
}

export function spawnService({ entry, env, nodeArgs = [], forgetAfterStart = false }: ServiceOptions): ServiceProcess {
  const child = spawn(process.execPath, [...nodeArgs, ...nodeArguments(entry)], {
    cwd: ROOT,
    // One process unless the caller asks for workers (the service's default is every core).
    env: { WEB_CONCURRENCY: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let partial = '';
  let keep = true;
  const lines: ServiceProcess['lines'] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    if (!keep) return;
    out += chunk;
    partial += chunk;
    const complete = partial.split('\n');
    partial = complete.pop()!;
    for (const line of complete) {
      if (!line.startsWith('{')) continue;
      try {
        const parsed = JSON.parse(line) as ServiceProcess['lines'][number];
        lines.push(parsed);
        if (forgetAfterStart && parsed.msg === 'listening') keep = false;
      } catch {
        // not a log line: kept in stdout() only
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  // 'exit' can come before the last chunk of stdout is read, and a test may assert that last
  // line: wait for 'close' too, which comes once the pipes are drained. A worker that outlives
  // its primary would hold them open, so 'exit' alone decides after a few seconds.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) =>
    child.once('exit', (code, signal) => {
      const done = () => resolveExit({ code, signal });
      child.once('close', done);
      setTimeout(done, 5_000).unref();
    }),
  );
  const stop = async (signal: NodeJS.Signals = 'SIGTERM', killAfterMs = 10_000) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      await exited;
      clearTimeout(killer);
    }
    return exited;
  };
  return { child, pid: child.pid!, lines, stdout: () => out, stderr: () => err, exited, stop };
}

/**
 * Starts the service (on a free port unless env.PORT says otherwise) and waits for its start-up
 * line, `{"msg":"listening","url":"http://host:port/",...}`, the last one it logs at start-up.
 */
export async function startService(options: ServiceOptions, timeoutMs = 60_000): Promise<RunningService> {
  const service = spawnService({ ...options, env: { PORT: '0', HOST: '127.0.0.1', ...options.env } });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const listening = service.lines.find((l) => l.msg === 'listening' && typeof l.url === 'string');
    if (listening) {
      const url = new URL(listening.url as string);
      return { ...service, url: url.origin, port: Number(listening.port ?? url.port) };
    }
    const ended = await Promise.race([service.exited, new Promise((r) => setTimeout(r, 50, undefined))]);
    if (ended) throw new Error(`the service exited before listening: ${JSON.stringify(ended)}\n${service.stderr()}${service.stdout()}`);
    if (Date.now() > deadline) {
      await service.stop('SIGKILL');
      throw new Error(`the service did not listen within ${timeoutMs} ms\n${service.stderr()}${service.stdout()}`);
    }
  }
}

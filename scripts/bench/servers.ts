// Starts the service and the baseline as child processes on free ports, through the one helper
// that starts the service (scripts/lib/service-process.ts), and stops them again. The service runs
// as it does in production, `node dist/main.js` (`npm run build` first; a stale dist/ is refused).
import { createInterface } from 'node:readline';
import { type Entry, ROOT, startService } from '../lib/service-process';

export { ROOT };

export interface RunningServer {
  name: string;
  url: string;
  pid: number;
  /** Resolves once the process has ended, by itself or stopped. */
  exited: Promise<unknown>;
  /** SIGTERM, then SIGKILL after 10 s; resolves with how the process ended. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const START_TIMEOUT_MS = 60_000;

/** `entry`: 'built' for the service, or the baseline's script (run through tsx). */
export async function startServer(name: string, entry: Entry, env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Promise<RunningServer> {
  const server = await startService(
    { entry, env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env }, nodeArgs, forgetAfterStart: true },
    START_TIMEOUT_MS,
  );
  // Whatever either server logs as an error shows in the benchmark's output, named.
  createInterface({ input: server.child.stderr! }).on('line', (line) => process.stderr.write(`[${name}] ${line}\n`));
  return {
    name,
    url: server.url,
    pid: server.pid,
    exited: server.exited,
    stop: () => server.stop('SIGTERM', 10_000),
  };
}

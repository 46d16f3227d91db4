import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { DatabaseConfig } from '../../src/config';

const ROOT = join(__dirname, '..', '..');

/**
 * The service as `npm start` runs it (src/main.ts under tsx), in a process of its own, with
 * only the environment given here (plus PATH and HOME), so that a developer's own variables
 * cannot change what a test sees.
 */
export interface ServiceProcess {
  child: ChildProcess;
  /** stdout, parsed line by line (the JSON log), as it arrives. */
  lines: Record<string, any>[];
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnService(env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let partial = '';
  const lines: Record<string, any>[] = [];
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    partial += chunk;
    const complete = partial.split('\n');
    partial = complete.pop()!;
    for (const line of complete) if (line.trim()) lines.push(JSON.parse(line));
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, lines, stdout: () => out, stderr: () => err, exited };
}

export interface RunningService extends ServiceProcess {
  url: string;
  port: number;
}

/** Starts the service on a free port and waits for its `listening` line (its last at start-up). */
export async function startService(env: Record<string, string>, timeoutMs = 60000): Promise<RunningService> {
  const service = spawnService({ PORT: '0', HOST: '127.0.0.1', ...env });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const listening = service.lines.find((l) => l.msg === 'listening');
    if (listening) return { ...service, url: `http://127.0.0.1:${listening.port}`, port: listening.port };
    const ended = await Promise.race([service.exited, new Promise((r) => setTimeout(r, 50, undefined))]);
    if (ended) throw new Error(`the service exited before listening: ${JSON.stringify(ended)}\n${service.stderr()}${service.stdout()}`);
    if (Date.now() > deadline) {
      service.child.kill('SIGKILL');
      throw new Error(`the service did not listen within ${timeoutMs} ms\n${service.stderr()}${service.stdout()}`);
    }
  }
}

/** DATABASE_URL for a test database config. */
export function databaseUrl(config: DatabaseConfig): string {
  if (config.client === 'sqlite') return `sqlite:${config.filename}`;
  const auth = `${encodeURIComponent(config.user)}${config.password ? `:${encodeURIComponent(config.password)}` : ''}`;
  return `mysql://${auth}@${config.host}:${config.port}/${config.database}`;
}

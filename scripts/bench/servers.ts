// Starts the service and the baseline as child processes on free ports, the way they run in
// production (node with the tsx loader, as `npm start` does), and stops them again.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

export const ROOT = resolve(__dirname, '../..');

export interface RunningServer {
  name: string;
  url: string;
  pid: number;
  /** Lines the process wrote on stderr (errors it logged). */
  errors: string[];
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;

export async function startServer(name: string, script: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Promise<RunningServer> {
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const errors: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    errors.push(line);
    process.stderr.write(`[${name}] ${line}\n`);
  });
  const exited = once(child, 'exit');

  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      // The baseline prints "listening on URL"; the service logs JSON with "url".
      const m = /listening on (http:\/\/\S+?)\/?(\s|$)/.exec(line) ?? /"msg":"listening".*"url":"(http:\/\/[^"]+?)\/?"|"url":"(http:\/\/[^"]+?)\/?".*"msg":"listening"/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1] ?? m[2]);
      }
    });
    void exited.then(([code]) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with code ${code} before listening: ${errors.join(' | ')}`));
    });
  });

  return {
    name,
    url,
    pid: child.pid!,
    errors,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited.catch(() => undefined);
      clearTimeout(killer);
    },
  };
}

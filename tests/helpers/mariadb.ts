import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { accepts, freePort } from '../../scripts/lib/ports';

export const MARIADBD = '/usr/sbin/mariadbd';
const INSTALL_DB = '/usr/bin/mariadb-install-db';

/** True when this machine can run a MariaDB server of a test's own. */
export function canRunMariadb(): boolean {
  return existsSync(MARIADBD) && existsSync(INSTALL_DB);
}

/**
 * A MariaDB server of one test's own: its own data folder, socket and port, so that it can be
 * stopped and started again without touching anybody else's server.
 */
export interface PrivateMariadb {
  port: number;
  /** DATABASE_URL for `database` on this server (root, no password). */
  url(database: string): string;
  /** Stops the server: SIGTERM and wait for it to exit (SIGKILL: a crash). */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts it again on the same port and data, and waits until it accepts connections. */
  start(): Promise<void>;
  /**
   * Freezes the server (SIGSTOP): the kernel still accepts connections, but nothing answers,
   * as with a hung server or a network that drops packets. `resume` thaws it.
   */
  pause(): void;
  resume(): void;
  /** Stops it, if running, and deletes its data. */
  destroy(): Promise<void>;
}

export async function startPrivateMariadb(): Promise<PrivateMariadb> {
  const dir = mkdtempSync(join(tmpdir(), 'records-mariadb-'));
  const datadir = join(dir, 'data');
  await promisify(execFile)(INSTALL_DB, [
    '--no-defaults',
    `--datadir=${datadir}`,
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
    '--user=root',
  ]);
  const port = await freePort();
  let child: ChildProcess | undefined;
  let log = '';

  async function start(): Promise<void> {
    log = '';
    const c = spawn(
      MARIADBD,
      [
        '--no-defaults',
        `--datadir=${datadir}`,
        `--port=${port}`,
        `--socket=${join(dir, 'mysqld.sock')}`,
        `--pid-file=${join(dir, 'mysqld.pid')}`,
        '--skip-networking=0',
        '--bind-address=127.0.0.1',
        '--user=root',
        '--innodb-buffer-pool-size=16M',
        '--innodb-log-file-size=8M',
        '--skip-log-bin',
        '--max-connections=200',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    c.stderr.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    child = c;
    const deadline = Date.now() + 30000;
    while (!(await accepts(port))) {
      if (c.exitCode !== null) throw new Error(`mariadbd exited with ${c.exitCode}:\n${log}`);
      if (Date.now() > deadline) throw new Error(`mariadbd did not accept connections within 30 s:\n${log}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((resolve) => c.once('exit', resolve));
    c.kill(signal);
    await exited;
  }

  await start();
  return {
    port,
    url: (database) => `mysql://root@127.0.0.1:${port}/${database}`,
    stop,
    start,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    async destroy() {
      await stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

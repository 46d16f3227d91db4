import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { accepts, freePort } from '../../scripts/lib/ports';
import { sleep } from './load';

/** The Redis that the machines run (DEVELOPERS.md); .ci/run starts it when it is down. */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const newClient = (url: string) => createClient({ url, socket: { connectTimeout: 2000, reconnectStrategy: false } });
type Client = ReturnType<typeof newClient>;

/**
 * A client of the tests' own, for looking at and deleting keys; fails with a message that says
 * what is missing when Redis does not answer, rather than letting the tests fail obscurely.
 */
export async function connectTestRedis(url = REDIS_URL): Promise<Client> {
  const client = newClient(url);
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    client.destroy();
    throw new Error(
      `these tests need Redis at ${url} (${(err as Error).message}); start it with \`redis-server --daemonize yes\` (.ci/run does)`,
      { cause: err },
    );
  }
  return client;
}

/** A key prefix no other test or run uses, so that counts never carry over. */
export function uniquePrefix(name: string): string {
  return `records-test:${name}:${process.pid}-${randomBytes(4).toString('hex')}:`;
}

/** Every key under `prefix` (a prefix of ours holds no glob characters). */
export async function keysUnder(client: Client, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const batch of client.scanIterator({ MATCH: `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`, COUNT: 1000 })) keys.push(...batch);
  return keys;
}

export async function deleteKeys(client: Client, prefix: string): Promise<void> {
  const keys = await keysUnder(client, prefix);
  if (keys.length) await client.del(keys);
}

/** A redis-server of a test's own, on a free port, that the test may stop and start again. */
export interface PrivateRedis {
  port: number;
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function privateRedis(): PrivateRedis {
  let child: ChildProcess | undefined;
  let port = 0;
  const self: PrivateRedis = {
    get port() {
      return port;
    },
    get url() {
      return `redis://127.0.0.1:${port}`;
    },
    async start() {
      port ||= await freePort();
      // Nothing on disk: no snapshot, no append-only file.
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      });
      const deadline = Date.now() + 10000;
      while (!(await accepts(port))) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
        await sleep(50);
      }
    },
    async stop() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
  };
  return self;
}

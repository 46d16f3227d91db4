import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type AppOptions } from '../../src/app';
import type { PoolConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { assertMatchesContract, prepareContract } from './contract';
import { createTestDatabase, type TestDatabase } from './db';

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  /** Sent as JSON unless `raw` is given. */
  body?: unknown;
  /** Sent as is (with `Content-Type: application/json` unless headers say otherwise). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export type Requester = <T = any>(method: string, path: string, options?: RequestOptions) => Promise<TestResponse<T>>;

export interface TestApp {
  url: string;
  database: TestDatabase;
  /** Sends a request to the listening app; every response is checked against the spec. */
  request: Requester;
  /** Every line the app logged, parsed, oldest first. */
  logs: Record<string, any>[];
  close(): Promise<void>;
}

export interface TestAppOptions extends Partial<AppOptions> {
  /** Pool size and query timeout (applied after migrations, as main.ts does). */
  pool?: PoolConfig;
}

/** The real app, listening on a free port, on a fresh database of the dialect under test. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const { pool, ...appOptions } = options;
  await prepareContract();
  const logs: Record<string, any>[] = [];
  const logger = createLogger('info', { write: (line: string) => void logs.push(JSON.parse(line)) });
  const database = await createTestDatabase(pool, { warn: (m) => logger.warn(m), error: (m) => logger.error(m) });
  const app = await createApp({
    db: database.db,
    bodyLimit: 1024 * 1024,
    fallbackHost: 'localhost',
    logger,
    ...appOptions,
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  // The client (fetch, in this same process) drops idle sockets after 4 s; the server must not
  // close them first. With the event loop blocked by a slow step, both timers come due at once,
  // and a request sent on a socket the server has just closed is reset (ECONNRESET).
  server.keepAliveTimeout = 60_000;
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    database,
    request: requester(url),
    logs,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await database.drop();
    },
  };
}

/** Requests to the service at `url`, each response checked against the spec. */
export function requester(url: string): Requester {
  return async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    let payload: string | Buffer | undefined = opts.raw;
    if (opts.body !== undefined) payload = JSON.stringify(opts.body);
    if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(url + path, { method, headers, body: payload, redirect: 'manual' });
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    const body = /^application\/(problem\+)?json/.test(type) && text ? JSON.parse(text) : text;
    await assertMatchesContract({ method, path: path.split('?')[0], status: res.status, headers: res.headers, body });
    return { status: res.status, headers: res.headers, body: body as T };
  };
}

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type AppOptions } from '../../src/app';
import { assertMatchesContract } from './contract';
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

export interface TestApp {
  url: string;
  database: TestDatabase;
  /** Sends a request to the listening app; every response is checked against the spec. */
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  close(): Promise<void>;
}

/** The real app, listening on a free port, on a fresh database of the dialect under test. */
export async function startTestApp(options: Partial<AppOptions> = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const app = await createApp({
    db: database.db,
    bodyLimit: 1024 * 1024,
    fallbackHost: 'localhost',
    ...options,
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    let payload: string | Buffer | undefined = opts.raw;
    if (opts.body !== undefined) payload = JSON.stringify(opts.body);
    if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(url + path, { method, headers, body: payload, redirect: 'manual' });
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    const body = type.includes('json') && text ? JSON.parse(text) : text;
    await assertMatchesContract({ method, path: path.split('?')[0], status: res.status, headers: res.headers, body });
    return { status: res.status, headers: res.headers, body: body as T };
  }

  return {
    url,
    database,
    request,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await database.drop();
    },
  };
}

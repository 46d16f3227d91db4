import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../../helpers/app';
import { fixtures } from '../../helpers/fixtures';
import { freePort } from '../../../scripts/lib/ports';

// An independent validator: Stoplight Prism's proxy, in front of the service with the contract it
// serves, reports every request or response that breaks the contract in an `sl-violations`
// header. Valid traffic over all five collections must draw none.
let app: TestApp;
let prism: ChildProcess;
let headShim: Server;
let proxy: string;
let output = '';
const dir = mkdtempSync(join(tmpdir(), 'records-prism-'));

beforeAll(async () => {
  app = await startTestApp();
  const spec = join(dir, 'openapi.json');
  writeFileSync(spec, await (await fetch(`${app.url}/openapi.json`)).text());
  const port = await freePort();
  proxy = `http://127.0.0.1:${port}`;
  headShim = await headWithoutContentType(app.url);
  const upstream = `http://127.0.0.1:${(headShim.address() as AddressInfo).port}`;
  prism = spawn(
    join(__dirname, '../../../node_modules/.bin/prism'),
    ['proxy', spec, upstream, '--host', '127.0.0.1', '--port', String(port)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  prism.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  prism.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const deadline = Date.now() + 60_000;
  while (!output.includes('Prism is listening')) {
    if (prism.exitCode !== null || Date.now() > deadline) throw new Error(`prism did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}, 90_000);

/**
 * Passes everything through, but drops Content-Type from HEAD answers: Prism's proxy parses a
 * body it is told is JSON even on HEAD, and answers 500 on the empty one. The service keeps GET's
 * headers on HEAD (RFC 9110); Prism still checks the status and every other header.
 */
async function headWithoutContentType(target: string): Promise<Server> {
  const server = createServer((req, res) => {
    const upstream = httpRequest(target + req.url, { method: req.method, headers: req.headers }, (answer) => {
      const headers = { ...answer.headers };
      if (req.method === 'HEAD') delete headers['content-type'];
      res.writeHead(answer.statusCode!, headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

afterAll(async () => {
  prism?.kill();
  headShim?.close();
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Seen {
  status: number;
  body: any;
  headers: Headers;
}
const violations: string[] = [];

async function send(method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Seen> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(proxy + path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    redirect: 'manual',
  });
  const text = await res.text();
  const found = res.headers.get('sl-violations');
  if (found) violations.push(`${method} ${path} -> ${res.status}: ${found}`);
  const json = (res.headers.get('content-type') ?? '').match(/^application\/(problem\+)?json/);
  return { status: res.status, body: json && text ? JSON.parse(text) : text, headers: res.headers };
}

test.each(fixtures.map((f) => [f.name, f] as const))(
  '%s: valid traffic draws no violation',
  async (name, f) => {
    violations.length = 0;
    const created = await send('POST', `/api/${name}/`, { body: f.valid(1), headers: { 'idempotency-key': `prism-${name}` } });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect((await send('POST', `/api/${name}/`, { body: f.valid(2) })).status).toBe(201);
    const term = String(f.valid(1)[f.searchFields[0]]).split(' ')[0];
    for (const query of ['', `?search=${encodeURIComponent(term)}`, '?page=1&page_size=2', '?ordering=-id', '?cursor=']) {
      expect((await send('GET', `/api/${name}/${query}`)).status).toBe(200);
    }
    for (const accept of ['application/x-ndjson', 'text/csv']) {
      expect((await send('GET', `/api/${name}/export/?ordering=-id`, { headers: { accept } })).status).toBe(200);
      expect((await send('HEAD', `/api/${name}/export/`, { headers: { accept } })).status).toBe(200);
    }
    expect((await send('GET', `/api/${name}/export/`, { headers: { accept: 'application/json' } })).status).toBe(406);
    const got = await send('GET', `/api/${name}/${id}/`);
    expect(got.status).toBe(200);
    const tag = got.headers.get('etag')!;
    expect((await send('GET', `/api/${name}/${id}/`, { headers: { 'if-none-match': tag } })).status).toBe(304);
    // HEAD, declared beside every GET: its successes and its failures, all without a body.
    expect((await send('HEAD', `/api/${name}/?ordering=-id`)).status).toBe(200);
    expect((await send('HEAD', `/api/${name}/${id}/`)).headers.get('etag')).toBe(tag);
    expect((await send('HEAD', `/api/${name}/${id}/`, { headers: { 'if-none-match': tag } })).status).toBe(304);
    expect((await send('HEAD', `/api/${name}/?page=99`)).status).toBe(404);
    const patched = await send('PATCH', `/api/${name}/${id}/`, { body: f.patch, headers: { 'if-match': tag } });
    expect(patched.status).toBe(200);
    expect((await send('PATCH', `/api/${name}/${id}/`, { body: f.patch, headers: { 'if-match': tag } })).status).toBe(412);
    expect((await send('PUT', `/api/${name}/${id}/`, { body: f.valid(3) })).status).toBe(200);
    // Fetched, changed and sent back whole: its id and timestamps are read-only in the body.
    const fetched = (await send('GET', `/api/${name}/${id}/`)).body as Record<string, unknown>;
    expect((await send('PUT', `/api/${name}/${id}/`, { body: { ...fetched, ...f.patch } })).status).toBe(200);
    expect((await send('PATCH', `/api/${name}/${id}/`, { body: { ...fetched, ...f.patch } })).status).toBe(200);
    if (f.uniqueFields.length) expect((await send('POST', `/api/${name}/`, { body: f.valid(3) })).status).toBe(409);
    expect((await send('DELETE', `/api/${name}/${id}/`)).status).toBe(204);
    expect((await send('GET', `/api/${name}/${id}/`)).status).toBe(404);
    expect((await send('HEAD', `/api/${name}/${id}/`)).status).toBe(404);
    expect((await send('GET', `/api/${name}/?page=99`)).status).toBe(404);
    expect(violations).toEqual([]);
  },
  60_000,
);

test('the service operations draw no violation', async () => {
  violations.length = 0;
  for (const path of ['/healthz', '/readyz', '/openapi.json', '/openapi.yaml', '/metrics', '/problems/unique', '/problems/stale-etag']) {
    expect((await send('GET', path)).status).toBe(200);
    expect((await send('HEAD', path)).status).toBe(200);
  }
  expect(violations).toEqual([]);
});

test('a request that breaks the contract is reported (the check can fail)', async () => {
  violations.length = 0;
  await send('GET', '/api/posts/?page_size=0');
  expect(violations.length).toBeGreaterThan(0);
});

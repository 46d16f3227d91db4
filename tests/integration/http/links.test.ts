import { byName } from '../../helpers/fixtures';
import { request as httpRequest } from 'node:http';
import { startTestApp, type TestApp } from '../../helpers/app';
import { assertMatchesContract } from '../../helpers/contract';

// `next`/`previous` are absolute: built from PUBLIC_URL when set, else from the request's Host
// only when it is a loopback name or allowed (ALLOWED_HOSTS), so that a forged Host never enters
// a link that a cache could serve to others.

/** GET with the Host header given (fetch cannot set it); the answer is checked against the spec. */
function get(app: TestApp, path: string, host: string): Promise<{ status: number; body: { next: string | null } }> {
  const url = new URL(app.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { next: string | null };
        const headers = new Headers(Object.entries(res.headers).map(([k, v]) => [k, String(v)]));
        const status = res.statusCode!;
        assertMatchesContract({ method: 'GET', path: new URL(path, app.url).pathname, status, headers, body }).then(
          () => resolve({ status, body }),
          reject,
        );
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function withTwoPages(app: TestApp): Promise<void> {
  for (let n = 1; n <= 3; n++) expect((await app.request('POST', '/api/posts/', { body: byName.posts.valid(n) })).status).toBe(201);
}

const PATH = '/api/posts/?page_size=2';

describe('without PUBLIC_URL or ALLOWED_HOSTS', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
    await withTwoPages(app);
  });
  afterAll(() => app.close());

  test.each([
    ['a forged host', 'evil.example', 'http://localhost/api/posts/?page_size=2&page=2'],
    ['a forged host with a port', 'evil.example:8080', 'http://localhost/api/posts/?page_size=2&page=2'],
    ['localhost', 'localhost:3000', 'http://localhost:3000/api/posts/?page_size=2&page=2'],
    ['127.0.0.1', '127.0.0.1:3000', 'http://127.0.0.1:3000/api/posts/?page_size=2&page=2'],
    ['[::1]', '[::1]:3000', 'http://[::1]:3000/api/posts/?page_size=2&page=2'],
  ])('%s (Host: %s)', async (_name, host, want) => {
    const res = await get(app, PATH, host);
    expect({ status: res.status, next: res.body.next }).toEqual({ status: 200, next: want });
  });
});

describe('with ALLOWED_HOSTS', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ allowedHosts: ['api.example.com', 'admin.example.com:8443'] });
    await withTwoPages(app);
  });
  afterAll(() => app.close());

  test.each([
    ['an allowed name, any port', 'API.example.com:81', 'http://api.example.com:81/api/posts/?page_size=2&page=2'],
    ['an allowed name and port', 'admin.example.com:8443', 'http://admin.example.com:8443/api/posts/?page_size=2&page=2'],
    ['an allowed name on another port', 'admin.example.com:9000', 'http://localhost/api/posts/?page_size=2&page=2'],
    ['a name not listed', 'evil.example', 'http://localhost/api/posts/?page_size=2&page=2'],
  ])('%s (Host: %s)', async (_name, host, want) => {
    const res = await get(app, PATH, host);
    expect({ status: res.status, next: res.body.next }).toEqual({ status: 200, next: want });
  });
});

describe('with PUBLIC_URL', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ publicUrl: 'https://records.example.com', allowedHosts: ['api.example.com'] });
    await withTwoPages(app);
  });
  afterAll(() => app.close());

  test.each([['evil.example'], ['api.example.com'], ['localhost']])('Host %s: links start with the public URL', async (host) => {
    const res = await get(app, PATH, host);
    expect({ status: res.status, next: res.body.next }).toEqual({
      status: 200,
      next: 'https://records.example.com/api/posts/?page_size=2&page=2',
    });
  });
});

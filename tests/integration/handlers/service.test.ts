import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { poolStats } from '../../../src/db/connection';
import { PROBLEM_KINDS, PROBLEM_TYPES } from '../../../src/problems';
import { problemPage } from '../../../src/problems/page';
import { SPEC_PATH } from '../../../src/spec';
import { startTestApp, type TestApp } from '../../helpers/app';

const CHROMIUM = '/usr/bin/chromium';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe('the served contract', () => {
  test('/openapi.json is what `redocly bundle` makes of openapi/openapi.yaml', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'bundle-')), 'openapi.json');
    execFileSync('npx', ['redocly', 'bundle', SPEC_PATH, '--ext', 'json', '-o', out], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off' },
      stdio: 'ignore',
    });
    const res = await app.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(JSON.parse(readFileSync(out, 'utf8')));
  });

  test('/openapi.yaml is the hand-written file itself', async () => {
    const res = await app.request('GET', '/openapi.yaml');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(res.body).toBe(readFileSync(SPEC_PATH, 'utf8'));
    expect(parse(res.body).openapi).toBe('3.0.3');
  });
});

describe('health', () => {
  test.each([
    ['liveness', { given: '/healthz', want: { status: 'ok' } }],
    ['readiness', { given: '/readyz', want: { status: 'ready' } }],
  ])('%s', async (_name, { given, want }) => {
    const res = await app.request('GET', given);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(want);
  });

  // Readiness is bounded to its second, waiting for a connection included: with the pool's one
  // connection held, a statement would wait a minute for it (the acquire timeout).
  test('readiness with every connection busy is 503 in its second, and 200 once one is free', async () => {
    const busy = await startTestApp({ pool: { size: 1, queryTimeoutMs: 60_000 } });
    try {
      let release!: () => void;
      const held = busy.database.db.transaction(() => new Promise<void>((resolve) => (release = resolve)));
      const res = await busy.request('GET', '/readyz');
      // The first check still waits for the pool: the next is answered at once, not queued too.
      const again = await busy.request('GET', '/readyz');
      const waiting = poolStats(busy.database.db).waiting;
      release();
      await held;
      expect({ status: res.status, retryAfter: res.headers.get('retry-after') }).toEqual({ status: 503, retryAfter: '2' });
      expect({ status: again.status, detail: again.body.detail }).toEqual({ status: 503, detail: 'The database did not answer in time' });
      expect(waiting).toBe(1);
      // Ready once the abandoned check has had its connection.
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = (await busy.request('GET', '/readyz')).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(200);
    } finally {
      await busy.close();
    }
  }, 15_000);
});

describe('/docs', () => {
  test('serves the Redocly page', async () => {
    const res = await app.request('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'self';/);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.body).toContain('Records API');
  });

  // The page must render with nothing but the service reachable: every request elsewhere is
  // refused and recorded, and the rendered page must show the operations.
  const browserTest = existsSync(CHROMIUM) ? test : test.skip;
  browserTest('renders in headless Chromium with the network cut off', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const page = await browser.newPage();
      const elsewhere: string[] = [];
      await page.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith(app.url) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
        elsewhere.push(url);
        return route.abort();
      });
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(String(err)));
      // The page runs under the CSP that the service sends with it: nothing may be refused.
      const refused: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) refused.push(m.text());
      });
      await page.goto(`${app.url}/docs`, { waitUntil: 'networkidle' });
      // Redoc shows one operation at a time: open one from the side menu, as a reader would.
      await page.getByText('books', { exact: true }).first().click();
      await page.getByText('Create a book', { exact: true }).first().click();
      await page.getByRole('heading', { name: 'Create a book' }).waitFor({ timeout: 20000 });
      const text = await page.locator('body').innerText();
      expect(text).toContain('ISBN-10');
      expect(text).toContain('9780547928227');
      expect(text).toContain('Pagination');
      // The scope the operation needs, as its description says it (x-required-scopes is the check's).
      expect(text).toContain('Needs the scope books:write');
      // An operation's URL starts with the spec's server, its variable's default filled in.
      expect(await page.getByText('http://localhost:3000/api/books/', { exact: true }).count()).toBeGreaterThan(0);
      expect(elsewhere).toEqual([]);
      expect(errors).toEqual([]);
      expect(refused).toEqual([]);
      await page.screenshot({ path: join(tmpdir(), 'records-docs.png'), fullPage: false });
    } finally {
      await browser.close();
    }
  });
});

// A problem's type (`/problems/<kind>`) resolves, against the service, to its kind's page.
describe('/problems/{kind}', () => {
  test.each(PROBLEM_KINDS)('%s: its page, under the API policy', async (kind) => {
    const { status, title } = PROBLEM_TYPES[kind];
    const res = await app.request('GET', `/problems/${kind}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none';/);
    expect(res.body).toBe(problemPage(kind));
    expect(res.body).toContain(`<h1>${title}</h1>`);
    expect(res.body).toContain(`<strong>${status}</strong>`);
    const head = await app.request('HEAD', `/problems/${kind}`);
    expect({ status: head.status, body: head.body }).toEqual({ status: 200, body: '' });
  });

  test("a problem's type, resolved against the URL it answered, is its page", async () => {
    const problem = await app.request('GET', '/api/books/999999/');
    expect(problem.body.type).toBe('/problems/not-found');
    const page = await app.request('GET', new URL(problem.body.type, `${app.url}/api/books/999999/`).pathname);
    expect(page.body).toContain('<h1>Not found</h1>');
  });

  test.each([
    ['a kind that is none', { method: 'GET', path: '/problems/no-such-kind', want: 'not-found' }],
    ['a kind in another case', { method: 'GET', path: '/problems/Unique', want: 'not-found' }],
    ['no kind', { method: 'GET', path: '/problems/', want: 'route-not-found' }],
    ['a trailing slash', { method: 'GET', path: '/problems/unique/', want: 'route-not-found' }],
    ['a method the page does not have', { method: 'POST', path: '/problems/unique', want: 'method-not-allowed' }],
  ] as const)('%s: a problem', async (_n, { method, path, want }) => {
    const res = await app.request(method, path);
    expect(res.status).toBe(PROBLEM_TYPES[want].status);
    expect(res.body.type).toBe(`/problems/${want}`);
  });
});

import { createSearch, SearchLimiter } from '../../../src/search';
import { startTestApp, type TestApp } from '../../helpers/app';
import { dialect } from '../../helpers/db';

/** The app's search limiter, whose slots the test holds: one at a time, below a pool of 3. */
const searchLimiter = new SearchLimiter(
  () => 1,
  () => 3,
);
import { latch } from '../../helpers/load';

// GET /metrics in Prometheus text format: requests by operationId and status, latency, the pool.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ pool: { size: 3, queryTimeoutMs: 5000 }, search: createSearch({}, { limiter: searchLimiter }) });
});
afterAll(() => app.close());

/** `name{labels} value` lines, as a map from `name{labels}` to the value. */
async function scrape(): Promise<Map<string, number>> {
  const res = await app.request('GET', '/metrics');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of (res.body as string).split('\n')) {
    const m = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) samples.set(m[1], Number(m[2]));
  }
  return samples;
}

test('counts requests by operationId and status, and times them', async () => {
  for (let i = 0; i < 3; i++) expect((await app.request('GET', '/api/books/')).status).toBe(200);
  expect((await app.request('GET', '/api/books/?page=0')).status).toBe(400);
  expect((await app.request('GET', '/api/nothing/')).status).toBe(404);
  const samples = await scrape();
  const want: [string, number][] = [
    ['http_requests_total{operation_id="listBooks",status="200"}', 3],
    ['http_requests_total{operation_id="listBooks",status="400"}', 1],
    ['http_requests_total{operation_id="none",status="404"}', 1],
    ['http_request_duration_seconds_count{operation_id="listBooks"}', 4],
    ['http_request_duration_seconds_bucket{le="+Inf",operation_id="listBooks"}', 4],
  ];
  for (const [name, value] of want) expect([name, samples.get(name)]).toEqual([name, value]);
  expect(samples.get('http_request_duration_seconds_sum{operation_id="listBooks"}')).toBeGreaterThan(0);
});

test('shows the database pool: in use, idle, waiting and its size', async () => {
  const samples = await scrape();
  expect({
    inUse: samples.get('db_pool_connections_in_use'),
    waiting: samples.get('db_pool_acquires_waiting'),
    max: samples.get('db_pool_connections_max'),
  }).toEqual({ inUse: 0, waiting: 0, max: dialect === 'mysql' ? 3 : 1 });
  expect(samples.get('db_pool_connections_idle')).toBeGreaterThanOrEqual(dialect === 'mysql' ? 1 : 0);
  expect(samples.has('process_resident_memory_bytes')).toBe(true);
});

test('on MySQL, shows the search turns: running, waiting and how many run at once; SQLite has none', async () => {
  const gauges = async () => {
    const samples = await scrape();
    return {
      running: samples.get('db_search_turns_running'),
      waiting: samples.get('db_search_turns_waiting'),
      max: samples.get('db_search_turns_max'),
    };
  };
  if (dialect === 'sqlite') {
    expect(await gauges()).toEqual({ running: undefined, waiting: undefined, max: undefined });
    return;
  }
  expect(await gauges()).toEqual({ running: 0, waiting: 0, max: 1 });
  const held = latch();
  const first = searchLimiter.run(undefined, () => held.done);
  const second = searchLimiter.run(undefined, () => Promise.resolve());
  try {
    expect(await gauges()).toEqual({ running: 1, waiting: 1, max: 1 });
  } finally {
    held.open();
    await Promise.all([first, second]);
  }
  expect(await gauges()).toEqual({ running: 0, waiting: 0, max: 1 });
});

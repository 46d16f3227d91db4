import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requester } from '../../helpers/app';
import { dialect } from '../../helpers/db';
import { type Call, type Load, type Outcome, runLoad, sleep } from '../../helpers/load';
import { canRunMariadb, type PrivateMariadb, startPrivateMariadb } from '../../helpers/mariadb';
import { type RunningService, startService } from '../../helpers/service';
import { acquireTimeoutMs, CONNECT_TIMEOUT_MS } from '../../../src/db/connection';

// The database goes away under load and comes back: requests get 503 with Retry-After quickly,
// the service stays up, and it recovers by itself. The test runs a MariaDB server of its own
// (its own data folder and port) and takes it away mid-test: as a crash, as a clean stop, and
// frozen (connections accepted, nothing answered: a hung server or a partitioned network).
const run = dialect === 'mysql' && (canRunMariadb() || process.env.CI) ? describe : describe.skip;

const QUERY_TIMEOUT_MS = 1000;
// src/db/connection.ts: the connect timeout, and the pool's wait (the larger of it and the query timeout).
const ACQUIRE_TIMEOUT_MS = acquireTimeoutMs({ size: 10, queryTimeoutMs: QUERY_TIMEOUT_MS });

const calls = (n: number): Call =>
  n % 2
    ? { method: 'POST', path: '/api/posts/', body: { title: `t${n}`, content: 'c', author: 'a' } }
    : { method: 'GET', path: '/api/posts/?page_size=5' };

run('database outage', () => {
  let mariadb: PrivateMariadb;
  let service: RunningService;
  beforeAll(async () => {
    mariadb = await startPrivateMariadb();
    service = await startService({
      DATABASE_URL: mariadb.url(`records_test_outage_${randomBytes(4).toString('hex')}`),
      DB_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
    });
    const request = requester(service.url);
    expect((await request('GET', '/api/posts/')).status).toBe(200);
    expect((await request('POST', '/api/posts/', { body: { title: 'warm', content: 'c', author: 'a' } })).status).toBe(201);
  }, 120000);
  afterAll(async () => {
    service?.child.kill('SIGTERM');
    await service?.exited;
    await mariadb?.destroy();
  });

  const numbers: Record<string, unknown>[] = [];
  afterAll(() => {
    writeFileSync(join(tmpdir(), 'records-outage-numbers.json'), JSON.stringify(numbers, null, 2));
  });

  // A stopped server refuses connections at once, so 503s come at once. A frozen one answers
  // nothing: a new connection gives up after the connect timeout, and a statement already
  // running after the query timeout plus the connect timeout of the connection that would kill it.
  test.each<[string, { given: 'SIGKILL' | 'SIGTERM' | 'SIGSTOP'; want: { slowestMs: number } }]>([
    ['the server crashes (SIGKILL)', { given: 'SIGKILL', want: { slowestMs: ACQUIRE_TIMEOUT_MS } }],
    ['the server is stopped (SIGTERM)', { given: 'SIGTERM', want: { slowestMs: ACQUIRE_TIMEOUT_MS } }],
    // A hung server: a request may wait for a connection (all held by hung statements), then run
    // its own statement to the query timeout, then try to reach the server to kill it.
    [
      'the server hangs (SIGSTOP)',
      { given: 'SIGSTOP', want: { slowestMs: ACQUIRE_TIMEOUT_MS + QUERY_TIMEOUT_MS + CONNECT_TIMEOUT_MS + 500 } },
    ],
  ])(
    '%s: 503 with Retry-After, the service stays up, and it recovers by itself',
    async (name, { given, want }) => {
      const request = requester(service.url);
      const load = runLoad(service.url, 4, calls);
      await sleep(1000);
      const down = Date.now();
      if (given === 'SIGSTOP') mariadb.pause();
      else await mariadb.stop(given);
      // Hung for longer than a read that timed out and was run again would take twice.
      await sleep(given === 'SIGSTOP' ? 7000 : 2500);
      // Liveness is the process; readiness is the database.
      expect((await request('GET', '/healthz')).status).toBe(200);
      const ready = await request('GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.headers.get('retry-after')).toBe('2');
      await sleep(500);
      if (given === 'SIGSTOP') mariadb.resume();
      else await mariadb.start();
      const up = Date.now();
      // Recovered once a read and a write after the restart have both succeeded.
      const deadline = up + 20000;
      const recoveredAt = () => {
        const ok = (m: string) =>
          load.outcomes.find((o) => o.started >= up && o.call.method === m && (o.status === 200 || o.status === 201));
        const r = ok('GET');
        const w = ok('POST');
        return r && w ? Math.max(r.ended, w.ended) : undefined;
      };
      while (!recoveredAt() && Date.now() < deadline) await sleep(50);
      const recovered = recoveredAt();
      await sleep(1000);
      await load.stop();

      const outcomes = load.outcomes;
      const unavailable = outcomes.filter((o) => o.status === 503);
      const failed = outcomes.filter((o) => o.error || o.contract || ![200, 201, 503].includes(o.status!));
      const after = outcomes.filter((o) => recovered && o.started > recovered);
      const summary = {
        case: name,
        sent: outcomes.length,
        failed: failed.length,
        unavailable503: unavailable.length,
        slowest503Ms: Math.max(0, ...unavailable.map((o) => o.ended - o.started)),
        slowestMs: Math.max(0, ...outcomes.map((o) => o.ended - o.started)),
        outageSeconds: (up - down) / 1000,
        secondsToRecover: recovered ? (recovered - up) / 1000 : undefined,
        afterRecovery: after.length,
      };
      numbers.push(summary);
      console.log(`outage numbers: ${JSON.stringify(summary)}`);

      expect(failed.map((o) => `${o.call.method} ${o.requestId}: ${o.status ?? o.error} ${o.contract ?? ''}`)).toEqual([]);
      expect(unavailable.length).toBeGreaterThan(0);
      for (const o of unavailable) expect(o.retryAfter).toBe('2');
      // Every answer, 503 or not, bounded by the timeouts (never the pool's default minute, nor a
      // read run again after its time was spent).
      expect(summary.slowestMs).toBeLessThan(want.slowestMs + 1000);
      expect(summary.secondsToRecover).toBeDefined();
      expect(summary.secondsToRecover).toBeLessThan(10);
      expect(after.length).toBeGreaterThan(0);
      expect(after.filter((o) => o.status !== 200 && o.status !== 201)).toEqual([]);
      expect((await request('GET', '/readyz')).status).toBe(200);
      expect(service.child.exitCode).toBeNull();
      expect(service.lines.filter((l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
    },
    60000,
  );

  /**
   * Kills the database `after` ms into `load`, starts it again 1.5 s later, and ends the load
   * once a request started since has answered `recovered` (or 20 s on).
   */
  async function crashUnder(load: Load, after: number, recovered: number): Promise<{ outcomes: Outcome[]; up: number }> {
    await sleep(after);
    await mariadb.stop('SIGKILL');
    await sleep(1500);
    await mariadb.start();
    const up = Date.now();
    const deadline = up + 20000;
    while (!load.outcomes.some((o) => o.started >= up && o.status === recovered) && Date.now() < deadline) await sleep(50);
    await load.stop();
    return { outcomes: load.outcomes, up };
  }

  // A crash while bulk creates are in flight: each batch is in the database whole or not at all,
  // and every batch answered 201 is there whole (one answered 503 may have committed: see the spec).
  test('bulk creates cut by a crash (SIGKILL) are all or none', async () => {
    const request = requester(service.url);
    const SIZE = 200;
    const bulk = (n: number): Call => ({
      method: 'POST',
      path: '/api/posts/bulk/',
      body: Array.from({ length: SIZE }, (_, i) => ({ title: `batch ${n} post ${i}`, content: 'c', author: `bulk-${n}` })),
    });
    const { outcomes, up } = await crashUnder(runLoad(service.url, 3, bulk), 1500, 201);
    expect(outcomes.filter((o) => o.error || o.contract || ![201, 503].includes(o.status!))).toEqual([]);
    expect(outcomes.filter((o) => o.status === 503).length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.started >= up && o.status === 201).length).toBeGreaterThan(0);
    for (const o of outcomes) {
      const author = (o.call.body as { author: string }[])[0].author;
      const { body } = await request('GET', `/api/posts/?author=${author}&page_size=1`);
      if (o.status === 201) expect([author, body.count]).toEqual([author, SIZE]);
      else expect([author, [0, SIZE].includes(body.count)]).toEqual([author, true]);
    }
  }, 60000);

  // A crash while bulk deletes are in flight: each batch is gone whole or kept whole, and every
  // batch answered 204 is gone.
  test('bulk deletes cut by a crash (SIGKILL) are all or none', async () => {
    const request = requester(service.url);
    const SIZE = 100;
    const BATCHES = 60;
    const batches: { author: string; ids: number[] }[] = [];
    for (let n = 0; n < BATCHES; n++) {
      const author = `delete-${n}`;
      const body = Array.from({ length: SIZE }, (_, i) => ({ title: `gone ${n} post ${i}`, content: 'c', author }));
      const made = await request('POST', '/api/posts/bulk/', { body });
      expect(made.status).toBe(201);
      batches.push({ author, ids: made.body.results.map((r: { id: number }) => r.id) });
    }
    const del = (n: number): Call =>
      n < BATCHES
        ? { method: 'POST', path: '/api/posts/bulk-delete/', body: { ids: batches[n].ids } }
        : { method: 'GET', path: '/api/posts/?page_size=5' };
    const all = (await crashUnder(runLoad(service.url, 3, del), 300, 200)).outcomes;
    const outcomes = all.filter((o) => o.call.method === 'POST');
    expect(all.filter((o) => o.error || o.contract || ![200, 204, 503].includes(o.status!))).toEqual([]);
    expect(outcomes.filter((o) => o.status === 503).length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.status === 204).length).toBeGreaterThan(0);
    for (const [n, { author }] of batches.entries()) {
      const { body } = await request('GET', `/api/posts/?author=${author}&page_size=1`);
      const answered = outcomes.find((o) => (o.call.body as { ids: number[] }).ids[0] === batches[n].ids[0]);
      if (answered?.status === 204) expect([author, body.count]).toEqual([author, 0]);
      else expect([author, [0, SIZE].includes(body.count)]).toEqual([author, true]);
    }
  }, 90000);
});

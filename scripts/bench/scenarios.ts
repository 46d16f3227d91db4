// The scenarios, and one autocannon run of a scenario against one server.
import autocannon from 'autocannon';
import { type CpuSplit, cpuSplit } from './cpu';

export interface ScenarioContext {
  /** Seeded posts: ids 1..rows. */
  rows: number;
  /** Ids the create scenario added (patch edits only these, so seeded rows stay as generated). */
  created: { from: number; to: number };
  /** A cursor (as the service signs them) for the page after `cursorDepth` records. */
  deepCursor: string;
  cursorDepth: number;
}

export interface Scenario {
  name: string;
  title: string;
  /** The request as shown in the report. */
  shown(ctx: ScenarioContext): string;
  request(ctx: ScenarioContext): autocannon.Request;
}

const randomInt = (from: number, to: number) => from + Math.floor(Math.random() * (to - from + 1));
const JSON_HEADERS = { 'content-type': 'application/json' };

/** The deep page is halfway through: page 5,000 of 100,000 posts (10 a page). */
export const deepPage = (rows: number) => Math.max(1, Math.floor(rows / 20));

/** Two words of the generated text's middle frequency: each in about one post in ten. */
export const SEARCH = 'river lantern';

// Reads first, then writes: create adds the newest posts, which would change what the list
// scenarios see, and patch edits only what create added.
export const SCENARIOS: Scenario[] = [
  {
    name: 'get',
    title: 'get by id (random ids)',
    shown: (ctx) => `GET /api/posts/{1..${ctx.rows}}/`,
    request: (ctx) => ({
      method: 'GET',
      setupRequest: (req) => ({ ...req, path: `/api/posts/${randomInt(1, ctx.rows)}/` }),
    }),
  },
  {
    name: 'list',
    title: 'list page 1',
    shown: () => 'GET /api/posts/',
    request: () => ({ method: 'GET', path: '/api/posts/' }),
  },
  {
    name: 'deep',
    title: 'list deep page',
    shown: (ctx) => `GET /api/posts/?page=${deepPage(ctx.rows)}`,
    request: (ctx) => ({ method: 'GET', path: `/api/posts/?page=${deepPage(ctx.rows)}` }),
  },
  {
    name: 'cursor1',
    title: 'cursor page 1',
    shown: () => 'GET /api/posts/?cursor=',
    request: () => ({ method: 'GET', path: '/api/posts/?cursor=' }),
  },
  {
    name: 'cursordeep',
    title: 'cursor page deep',
    shown: (ctx) => `GET /api/posts/?cursor={after ${ctx.cursorDepth.toLocaleString('en')} posts}`,
    request: (ctx) => ({ method: 'GET', path: `/api/posts/?cursor=${ctx.deepCursor}` }),
  },
  {
    name: 'search',
    title: 'search, two terms',
    shown: () => `GET /api/posts/?search=${encodeURIComponent(SEARCH)}`,
    request: () => ({ method: 'GET', path: `/api/posts/?search=${encodeURIComponent(SEARCH)}` }),
  },
  {
    name: 'create',
    title: 'create',
    shown: () => 'POST /api/posts/',
    request: () => ({
      method: 'POST',
      path: '/api/posts/',
      headers: JSON_HEADERS,
      body: JSON.stringify({ title: 'Written by the benchmark', content: 'A post the benchmark created.', author: 'bench' }),
    }),
  },
  {
    name: 'patch',
    title: 'patch',
    shown: () => 'PATCH /api/posts/{created ids}/',
    request: (ctx) => ({
      method: 'PATCH',
      headers: JSON_HEADERS,
      body: JSON.stringify({ title: 'Edited by the benchmark' }),
      setupRequest: (req) => ({ ...req, path: `/api/posts/${randomInt(ctx.created.from, ctx.created.to)}/` }),
    }),
  },
];

export interface Measurement {
  /** Successful (2xx) responses per second. */
  requestsPerSecond: number;
  /** Latency of successful responses, ms. */
  p50: number;
  p99: number;
  requests: number;
  /** 503s: the service turning requests away while its database pool stays busy. */
  shed: number;
  /** Other non-2xx responses, connection errors and timeouts: the harness or a server is broken. */
  failures: number;
  statusCodes: Record<string, number>;
  /** Cores that programs other than the servers, the load generator and the database kept busy. */
  foreignCores?: number;
  /** CPU time the server process spent per response, ms: what its code costs, whatever the load. */
  cpuMsPerRequest?: number;
  /** The machine's CPU per response, and the server's, the database's and the load generator's part. */
  cpu?: CpuSplit;
}

/** Slow scenarios (a deep page, a search) queue behind a busy database; wait, do not drop. */
const REQUEST_TIMEOUT_S = 60;

export async function measure(
  url: string,
  /** Several: each connection sends them in turn, over and over (a client typing, say). */
  request: autocannon.Request | autocannon.Request[],
  seconds: number,
  connections: number,
  serverPid?: number,
): Promise<Measurement> {
  const split = serverPid ? cpuSplit(serverPid) : () => undefined;
  const requests = Array.isArray(request) ? request : [request];
  const result = await autocannon({ url, connections, duration: seconds, timeout: REQUEST_TIMEOUT_S, requests });
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, (s as { count: number }).count]),
  );
  const ok = Object.entries(statusCodes)
    .filter(([code]) => code.startsWith('2'))
    .reduce((n, [, c]) => n + c, 0);
  const shed = statusCodes['503'] ?? 0;
  const cpu = split(result.requests.total);
  return {
    requestsPerSecond: result.duration > 0 ? ok / result.duration : 0,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    shed,
    failures: result.non2xx - shed + result.errors,
    statusCodes,
    foreignCores: cpu?.foreignCores,
    cpuMsPerRequest: cpu?.serverMs,
    cpu,
  };
}

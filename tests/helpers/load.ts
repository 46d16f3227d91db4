import { Agent, request as httpRequest } from 'node:http';
import { assertMatchesContract } from './contract';

export interface Call {
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** What became of one request: an answer (checked against the spec) or a network error. */
export interface Outcome {
  requestId: string;
  call: Call;
  started: number;
  ended: number;
  status?: number;
  retryAfter?: string;
  /** The network error's code (ECONNREFUSED, ECONNRESET, ...) when no answer came. */
  error?: string;
  /** Set when the answer broke the contract. */
  contract?: string;
}

/** One request over `agent`; never throws: the outcome says what happened. */
export async function send(url: string, agent: Agent, call: Call, requestId: string): Promise<Outcome> {
  const started = Date.now();
  const payload = call.body === undefined ? undefined : JSON.stringify(call.body);
  const headers: Record<string, string> = { ...call.headers, 'x-request-id': requestId };
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const outcome: Outcome = { requestId, call, started, ended: started };
  try {
    const res = await new Promise<{ status: number; headers: Headers; text: string }>((resolve, reject) => {
      const req = httpRequest(url + call.path, { method: call.method, agent, headers }, (r) => {
        let text = '';
        r.setEncoding('utf8').on('data', (c: string) => (text += c));
        r.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(r.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
          resolve({ status: r.statusCode!, headers: h, text });
        });
        r.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
    outcome.status = res.status;
    outcome.retryAfter = res.headers.get('retry-after') ?? undefined;
    const type = res.headers.get('content-type') ?? '';
    const body = type.includes('json') && res.text ? JSON.parse(res.text) : res.text;
    try {
      await assertMatchesContract({ method: call.method, path: call.path.split('?')[0], status: res.status, headers: res.headers, body });
    } catch (err) {
      outcome.contract = (err as Error).message;
    }
  } catch (err) {
    outcome.error = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
  }
  outcome.ended = Date.now();
  return outcome;
}

export interface Load {
  outcomes: Outcome[];
  /** Asks the workers to stop after their current request, and waits for them. */
  stop(): Promise<void>;
}

/**
 * `workers` clients, each sending `next(n)` after the previous answer, over keep-alive
 * connections, until stopped or until `stopOn` says so of an outcome (a worker then stops).
 */
export function runLoad(url: string, workers: number, next: (n: number) => Call, stopOn: (o: Outcome) => boolean = () => false): Load {
  const agent = new Agent({ keepAlive: true, maxSockets: workers });
  const outcomes: Outcome[] = [];
  let stopping = false;
  let serial = 0;
  const run = async (w: number) => {
    while (!stopping) {
      const n = serial++;
      const o = await send(url, agent, next(n), `load-${w}-${n}`);
      outcomes.push(o);
      if (stopOn(o)) return;
    }
  };
  const done = Promise.all(Array.from({ length: workers }, (_, w) => run(w)));
  return {
    outcomes,
    async stop() {
      stopping = true;
      await done;
      agent.destroy();
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A promise and the function that settles it: work that runs until a test lets it end. */
export function latch(): { done: Promise<void>; open(): void } {
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { done, open };
}

import { ClusterMemoryStoreWorker } from '@express-rate-limit/cluster-memory-store';
import cors from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { type IncrementResponse, rateLimit, type Store } from 'express-rate-limit';
import type { Operation } from 'openapi-backend';
import { inWorker } from '../cluster';
import type { Logger } from '../logger';
import { COUNT_TIMEOUT_MS, Outage } from './outage';
import { HttpProblem } from '../problems';

type Middleware = (req: Request, res: Response, next: NextFunction) => void;

/**
 * At most `perMinute` /api/ requests a minute per client address (req.ip, which TRUST_PROXY
 * decides), counted in `store` when given (Redis: every host's workers share it), else once
 * across worker processes (by the primary). Answers carry the IETF draft-8 RateLimit headers.
 */
export function apiRateLimit(perMinute: number, logger: Logger, store?: Store): Middleware {
  const limiter = minuteLimiter({ perMinute, logger, store, identifier: 'per-minute', prefix: 'api' });
  return (req, res, next) => (req.path.startsWith('/api/') ? limiter(req, res, next) : next());
}

/**
 * At most `perMinute` /api/ requests a minute per token, counted by the token's name (set by
 * src/auth's authenticate) in the same kind of store as the per-address limit, after it: a
 * request must pass both. Requests without a token are not counted here.
 */
export function tokenRateLimit(perMinute: number, logger: Logger, store?: Store): Middleware {
  const limiter = minuteLimiter({
    perMinute,
    logger,
    store,
    identifier: 'per-token',
    prefix: 'token',
    key: (_req, res) => `token:${(res.locals.principal as { name: string }).name}`,
  });
  return (req, res, next) => (req.path.startsWith('/api/') && res.locals.principal ? limiter(req, res, next) : next());
}

interface LimiterOptions {
  perMinute: number;
  logger: Logger;
  store?: Store;
  /** The policy's name in the RateLimit headers. */
  identifier: string;
  /** Keeps this limiter's counts apart from the others' in the primary's memory. */
  prefix: string;
  /** What is counted; default: the client address. */
  key?: (req: Request, res: Response) => string;
}

function minuteLimiter({ perMinute, logger, store, identifier, prefix, key }: LimiterOptions): Middleware {
  return rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    standardHeaders: 'draft-8',
    identifier,
    legacyHeaders: false,
    ...(key ? { keyGenerator: key } : {}),
    // A store's failures are its Outage's to log, once; express-rate-limit logs every request's.
    logger: {
      warn: (err, message) => logger.warn(err as object, message),
      error: (err, message) => (message?.includes('error from store') ? undefined : logger.error(err as object, message)),
    },
    ...(store ? { store } : inWorker ? { store: new SharedCounts({ prefix }, new Outage(logger, 'the primary process')) } : {}),
    // A count that does not come back lets the request through, uncounted (no RateLimit
    // headers): a missed count is better than failing or holding a request the client was
    // entitled to. Every store answers or fails within seconds.
    passOnStoreError: true,
    // The contract's Retry-After is at least 1 (draft-8's t may be 0 at the end of a window).
    retryAfter: (req: Request) => {
      const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      return Math.max(1, Math.ceil(((reset?.getTime() ?? Date.now() + 60_000) - Date.now()) / 1000));
    },
    handler: (_req, res, next) => {
      next(new HttpProblem('rate-limited', `Too many requests; try again in ${res.get('Retry-After')} seconds`));
    },
  });
}

/**
 * The counts kept by the primary, asked over IPC. The library gives the primary 1 s to answer an
 * increment; on a busy machine an answer can take longer, so it is given COUNT_TIMEOUT_MS. One
 * that still does not come back lets the request through (passOnStoreError).
 */
class SharedCounts extends ClusterMemoryStoreWorker {
  constructor(
    options: ConstructorParameters<typeof ClusterMemoryStoreWorker>[0],
    private readonly outage: Outage,
  ) {
    super(options);
  }

  override async increment(key: string): Promise<IncrementResponse> {
    // `send` is the worker store's own IPC call (package pinned to the exact version it has).
    const self = this as unknown as {
      send(command: string, args: unknown[], ms: number): Promise<{ totalHits: number; resetTime: string }>;
    };
    try {
      const { totalHits, resetTime } = await self.send('increment', [key], COUNT_TIMEOUT_MS);
      this.outage.ok();
      return { totalHits, resetTime: new Date(resetTime) };
    } catch (err) {
      this.outage.failed(err);
      throw err;
    }
  }
}

/** What a page on another origin may use: CORS lets it send and read nothing else. */
export interface CorsAllowed {
  methods: string[];
  request: string[];
  response: string[];
}

/**
 * CORS methods and headers from the spec's operations, so what the spec adds reaches browsers with
 * no list to keep; Authorization and Content-Type (never header parameters in OpenAPI) are added,
 * and HEAD goes wherever GET is.
 */
export function corsAllowed(operations: readonly Operation[]): CorsAllowed {
  const methods = new Set<string>();
  const request = new Set(['Authorization', 'Content-Type']);
  const response = new Set<string>();
  for (const op of operations) {
    methods.add(op.method.toUpperCase());
    if (op.method.toUpperCase() === 'GET') methods.add('HEAD');
    for (const param of (op.parameters ?? []) as { in?: string; name?: string }[]) {
      if (param.in === 'header' && param.name) request.add(param.name);
    }
    for (const answer of Object.values(op.responses ?? {}) as { headers?: Record<string, unknown> }[]) {
      for (const name of Object.keys(answer.headers ?? {})) response.add(name);
    }
  }
  return { methods: [...methods], request: [...request], response: [...response] };
}

/**
 * CORS for the configured origins only (`*`: any). A preflight from another origin, or an
 * OPTIONS request that is no preflight, is not answered here: it gets the app's 405.
 */
export function corsFor(origins: readonly string[], allow: CorsAllowed): Middleware {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  const handler: RequestHandler = cors({
    origin: (origin, cb) => cb(null, any ? '*' : Boolean(origin && allowed.has(origin))),
    methods: allow.methods,
    allowedHeaders: allow.request,
    exposedHeaders: allow.response,
    maxAge: 600,
  });
  return (req, res, next) => {
    if (!any) res.vary('Origin');
    if (req.method === 'OPTIONS' && !req.get('access-control-request-method')) return next();
    handler(req, res, next);
  };
}

import { createHash, timingSafeEqual } from 'node:crypto';
import cors from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Operation } from 'openapi-backend';
import type { Logger } from '../logger';
import { sendProblem } from './problem';

type Middleware = (req: Request, res: Response, next: NextFunction) => void;

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const digest = (token: string) => createHash('sha256').update(token).digest();

/**
 * Requires `Authorization: Bearer <token>` where the spec's operation asks for a security scheme,
 * and on every /api/ path that has no operation (so that unknown paths cannot be probed).
 * Tokens are compared as SHA-256 digests in constant time, and every token is compared, so
 * neither the time taken nor an early exit tells how much of a guess was right.
 */
export function bearerAuth(tokens: readonly string[]): Middleware {
  const known = tokens.map(digest);
  const valid = (token: string) => {
    const given = digest(token);
    let match = false;
    for (const k of known) match = timingSafeEqual(given, k) || match;
    return match;
  };
  return (req, res, next) => {
    const operation = res.locals.operation as Operation | undefined;
    const security = operation?.security ?? [];
    // `{}` among the requirements would make the token optional.
    const required = operation ? security.length > 0 && security.every((r) => Object.keys(r).length > 0) : req.path.startsWith('/api/');
    if (!required) return next();
    const m = BEARER.exec(req.get('authorization') ?? '');
    if (m && valid(m[1])) {
      res.locals.authenticated = true;
      return next();
    }
    unauthorized(res, m ? 'The bearer token is not valid' : 'This API requires Authorization: Bearer <token>', Boolean(m));
  };
}

export function unauthorized(res: Response, detail: string, badToken: boolean): void {
  res.set('WWW-Authenticate', badToken ? 'Bearer realm="records", error="invalid_token"' : 'Bearer realm="records"');
  sendProblem(res, 401, detail);
}

/**
 * At most `perMinute` /api/ requests a minute per client address (req.ip, which TRUST_PROXY
 * decides), counted in this process. Answers carry the IETF draft-8 RateLimit headers.
 */
export function apiRateLimit(perMinute: number, logger: Logger): Middleware {
  const limiter = rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    standardHeaders: 'draft-8',
    identifier: 'per-minute',
    legacyHeaders: false,
    logger,
    // The contract's Retry-After is at least 1 (draft-8's t may be 0 at the end of a window).
    retryAfter: (req: Request) => {
      const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      return Math.max(1, Math.ceil(((reset?.getTime() ?? Date.now() + 60_000) - Date.now()) / 1000));
    },
    handler: (_req, res) => {
      sendProblem(res, 429, `Too many requests; try again in ${res.get('Retry-After')} seconds`);
    },
  });
  return (req, res, next) => (req.path.startsWith('/api/') ? limiter(req, res, next) : next());
}

/**
 * CORS for the configured origins only (`*`: any). A preflight from another origin, or an
 * OPTIONS request that is no preflight, is not answered here: it gets the app's 405.
 */
export function corsFor(origins: readonly string[]): Middleware {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  const handler: RequestHandler = cors({
    origin: (origin, cb) => cb(null, any ? '*' : Boolean(origin && allowed.has(origin))),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id'],
    exposedHeaders: ['X-Request-Id', 'Location', 'Allow', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'WWW-Authenticate'],
    maxAge: 600,
  });
  return (req, res, next) => {
    if (!any) res.vary('Origin');
    if (req.method === 'OPTIONS' && !req.get('access-control-request-method')) return next();
    handler(req, res, next);
  };
}

import express, { type NextFunction, type Request, type Response } from 'express';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, type Context } from 'openapi-backend';
import { type Db, poolStats } from './db/connection';
import { classifyDbError } from './db/errors';
import { listQueryErrors, operationHandlers } from './handlers';
import type { ListQuery } from './handlers/list-query';
import { serviceHandlers } from './handlers/service';
import { apiRateLimit, bearerAuth, corsFor, unauthorized } from './http/access';
import { securityHeaders } from './http/headers';
import { createMetrics } from './http/metrics';
import { sendProblem } from './http/problem';
import { requestContext } from './http/requestContext';
import { routeTable } from './http/routes';
import { fieldErrors, malformedStrings, onlyPathErrors, operationParams } from './http/validation';
import { type Logger, silentLogger } from './logger';
import { loadSpec, readSpecText } from './spec';

export interface AppOptions {
  db: Db;
  bodyLimit: number;
  /** Host for absolute links when a request's Host header is missing or not sane. */
  fallbackHost: string;
  /** Request lines and unexpected errors (which never reach the client). Default: silent. */
  logger?: Logger;
  /** Bearer tokens that operations with a security requirement need; none: the API is open. */
  apiTokens?: readonly string[];
  /** Origins browsers may call from (`*`: any); none: no CORS headers. */
  corsOrigins?: readonly string[];
  /** Requests a minute per client address on /api/; undefined: unlimited. */
  rateLimitPerMinute?: number;
  /** Proxy hops whose X-Forwarded-For is believed for the client address (0: none). */
  trustProxy?: number;
}

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);
const RETRY_AFTER_SECONDS = 2;

export async function createApp(options: AppOptions): Promise<express.Express> {
  // One text: what routes and validates requests is what /openapi.* serves.
  const specText = readSpecText();
  const spec = loadSpec(specText);
  const specJson = JSON.stringify(spec);
  const logger = options.logger ?? silentLogger;
  const tokens = options.apiTokens ?? [];
  const metrics = createMetrics(() => poolStats(options.db));

  const api = new OpenAPIBackend({
    definition: loadSpec(specText),
    strict: true,
    validate: true,
    coerceTypes: true,
    ignoreTrailingSlashes: false,
    ajvOpts: { allErrors: true, verbose: true },
    securityHandlers: {
      bearerAuth: (_c: Context, _req: Request, res: Response) => tokens.length === 0 || res.locals.authenticated === true,
    },
    customizeAjv: (ajv) => {
      addFormats(ajv, { mode: 'full' });
      return ajv;
    },
    handlers: {
      ...operationHandlers({ db: options.db, spec, fallbackHost: options.fallbackHost }),
      ...serviceHandlers({ db: options.db, specText, specJson, metrics: metrics.registry }),
      // The bearerAuth middleware below has checked the token before the body was read; this
      // makes the spec's security requirements binding for whatever that check let through.
      unauthorizedHandler: async (_c: Context, _req: Request, res: Response) =>
        unauthorized(res, 'This API requires Authorization: Bearer <token>', false),
      validationFail: async (c: Context, _req: Request, res: Response) => {
        const errors = c.validation.errors ?? [];
        if (onlyPathErrors(errors)) return sendProblem(res, 404, 'No record with this id');
        const more = listQueryErrors(c.operation.operationId, c.request.query as ListQuery);
        const named = fieldErrors(errors);
        sendProblem(res, 400, 'Request validation failed', [...named, ...more.filter((m) => !named.some((n) => n.field === m.field))]);
      },
      notFound: async (_c: Context, req: Request, res: Response) => sendProblem(res, 404, `Nothing at ${req.path}`),
      methodNotAllowed: async (_c: Context, req: Request, res: Response) => {
        res.set('Allow', (routes.allowed(req.path) ?? []).join(', '));
        sendProblem(res, 405, `${req.method} is not allowed on this path`);
      },
    },
  });
  await api.init();
  const operations = api.router.getOperations();
  const routes = routeTable(operations);
  // openapi-backend rebuilds these on every request; the spec does not change while we run.
  api.router.getOperations = () => operations;
  api.router.matchOperation = ((req: { method: string; path: string }, strict?: boolean) => {
    const found = routes.match(req.method.toUpperCase(), req.path);
    if (found.kind === 'operation') return found.operation;
    if (!strict) return undefined;
    throw new Error(found.kind === 'method' ? '405-methodNotAllowed: no such method on this path' : '404-notFound: no route matches request');
  }) as typeof api.router.matchOperation;

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', options.trustProxy ?? 0);

  app.use(requestContext(routes, logger, metrics));
  app.use(securityHeaders('/docs'));
  if (options.corsOrigins?.length) app.use(corsFor(options.corsOrigins));
  // Counted before the token check, so that guessing tokens is limited too.
  if (options.rateLimitPerMinute) app.use(apiRateLimit(options.rateLimitPerMinute, logger));
  if (tokens.length) app.use(bearerAuth(tokens));

  // Paths end with a slash; the same path without it is redirected, keeping method and query.
  app.use((req, res, next) => {
    if (req.path.endsWith('/') || !routes.allowed(`${req.path}/`)) return next();
    const q = req.originalUrl.indexOf('?');
    res.redirect(308, `${req.path}/${q === -1 ? '' : req.originalUrl.slice(q)}`);
  });

  // Only an operation that takes a body parses one, and only as JSON: 415 before any parsing.
  const json = express.json({
    limit: options.bodyLimit,
    type: () => true,
    strict: false,
    // An empty body is no JSON document; body-parser would read it as {}, and a PATCH would pass.
    verify: (_req, _res, buf) => {
      if (buf.length === 0) throw Object.assign(new Error('empty body'), { type: 'entity.parse.failed' });
    },
  });
  app.use((req, res, next) => {
    const methods = routes.allowed(req.path);
    if (!WITH_BODY.has(req.method) || !methods?.includes(req.method)) return next();
    const [type, ...params] = String(req.headers['content-type'] ?? '').toLowerCase().split(';').map((p) => p.trim());
    if (type !== 'application/json') {
      return sendProblem(res, 415, `The request body must be application/json, not ${type || 'absent'}`);
    }
    // JSON is UTF-8 (RFC 8259); body-parser would also decode UTF-16, which the contract refuses.
    const charset = params.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      return sendProblem(res, 415, `The request body must be UTF-8 application/json, not charset ${charset}`);
    }
    json(req, res, next);
  });

  app.use(async (req, res, next) => {
    try {
      const bad = malformedStrings(req.body);
      if (bad.length) return sendProblem(res, 400, 'Request validation failed', bad);
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      const found = res.locals.route;
      const q = req.originalUrl.indexOf('?');
      const rawQuery = q === -1 ? '' : req.originalUrl.slice(q + 1);
      const params = found?.kind === 'operation'
        ? operationParams(found.operation, found.params, req.query as Record<string, unknown>, rawQuery)
        : undefined;
      if (params?.loose === 'path') return sendProblem(res, 404, 'No record with this id');
      if (params?.loose.length) return sendProblem(res, 400, 'Request validation failed', params.loose);
      await api.handleRequest(
        { method, path: req.path, query: params?.query ?? {}, body: req.body, headers: req.headers as Record<string, string> },
        req,
        res,
      );
    } catch (err) {
      next(err);
    }
  });

  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const type = (err as { type?: string }).type;
    const requestId = res.locals.requestId;
    if (res.headersSent) return logger.error({ err, requestId }, 'error after the answer began');
    if (type === 'entity.parse.failed') return sendProblem(res, 400, 'The request body is not valid JSON');
    if (type === 'entity.too.large') return sendProblem(res, 413, `The request body is larger than ${options.bodyLimit} bytes`);
    if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
      return sendProblem(res, 415, 'The request body must be UTF-8 application/json');
    }
    if (type === 'request.aborted' || type === 'request.size.invalid') return sendProblem(res, 400, 'The request body is incomplete');
    const failure = classifyDbError(err, '', []);
    if (failure?.kind === 'unavailable') {
      logger.warn({ err, requestId }, 'database unavailable');
      res.set('Retry-After', String(RETRY_AFTER_SECONDS));
      return sendProblem(res, 503, failure.timeout ? 'The database did not answer in time' : 'The database is unavailable');
    }
    logger.error({ err, requestId }, 'unexpected error');
    sendProblem(res, 500, 'An unexpected error occurred');
  });

  return app;
}

import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Operation } from 'openapi-backend';
import type { Logger } from '../logger';
import type { Metrics } from './metrics';
import type { RouteMatch, RouteTable } from './routes';

/** What later middleware and sendProblem read from `res.locals`. */
export interface RequestLocals {
  requestId: string;
  /** The spec operation the request routes to, if any. */
  operation?: Operation;
  /** What the route table found for the request (the operation with its path parameters). */
  route: RouteMatch;
  /** Set by the bearer check when the request may reach an operation that requires a token. */
  authenticated?: boolean;
}

// A client's id is kept only when it cannot forge log structure or carry anything unexpected.
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFrom(header: string | undefined): string {
  return header && SANE_ID.test(header) ? header : randomUUID();
}

const MAX_LOGGED_PATH = 200;

/**
 * First middleware: gives the request its id (echoed on every response) and its operation, and
 * on the way out writes its one log line and its metrics. The line names what was asked and
 * how it ended; never headers, query strings or bodies, which may carry tokens or data.
 */
export function requestContext(routes: RouteTable, logger: Logger, metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const requestId = requestIdFrom(req.get('x-request-id'));
    res.setHeader('X-Request-Id', requestId);
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const route = routes.match(method, req.path);
    const operation = route.kind === 'operation' ? route.operation : undefined;
    Object.assign(res.locals, { requestId, operation, route } satisfies RequestLocals);

    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // A request whose client left before the answer began has no status of its own.
      const status = res.headersSent ? res.statusCode : undefined;
      metrics.observe(operation?.operationId, status ?? 'aborted', seconds);
      const line = {
        method: req.method,
        path: req.path.slice(0, MAX_LOGGED_PATH),
        operationId: operation?.operationId,
        status,
        durationMs: Math.round(seconds * 10000) / 10,
        requestId,
        // The token's name (never the token), once src/auth has found it.
        ...(res.locals.principal ? { tokenName: (res.locals.principal as { name: string }).name } : {}),
        ...(res.writableFinished ? {} : { aborted: true }),
      };
      if (status !== undefined && status >= 500 && status !== 503) logger.error(line, 'request');
      else logger.info(line, 'request');
    });
    next();
  };
}

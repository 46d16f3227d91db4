import type { NextFunction, Request, Response } from 'express';
import type { Operation } from 'openapi-backend';
import { collectionOf } from '../collections';
import { classifyDbError } from '../db/errors';
import type { Logger } from '../logger';
import { HttpProblem, sendProblem } from '../problems';

/** How long a client is asked to wait before retrying when the database is unavailable. */
export const RETRY_AFTER_SECONDS = 2;

/**
 * The one place where a failure becomes an answer: thrown problems as they are, body-parser's
 * errors, database failures the contract names (a taken unique value: 409; an unreachable or
 * slow database: 503), and anything else as a 500 whose cause goes to the log, never the body.
 */
export function toProblem(err: unknown, operation: Operation | undefined, bodyLimit: number): HttpProblem | undefined {
  if (err instanceof HttpProblem) return err;
  const type = (err as { type?: string } | undefined)?.type;
  if (type === 'entity.parse.failed') return new HttpProblem('malformed-body', 'The request body is not valid JSON');
  if (type === 'entity.too.large') return new HttpProblem('body-too-large', `The request body is larger than ${bodyLimit} bytes`);
  if (type === 'charset.unsupported' || type === 'encoding.unsupported')
    return new HttpProblem('unsupported-media-type', 'The request body must be UTF-8 application/json');
  if (type === 'request.aborted' || type === 'request.size.invalid')
    return new HttpProblem('incomplete-request', 'The request body is incomplete');
  // body-parser's one 400 without a type: a gzip, deflate or br body that does not decompress
  // (its zlib error, the cause, stays in the log). It was a 500.
  if (!type && (err as { status?: unknown } | undefined)?.status === 400 && (err as { expose?: unknown }).expose === true)
    return new HttpProblem('malformed-body', 'The request body does not decode by its Content-Encoding');
  const c = collectionOf(operation?.operationId);
  const failure = classifyDbError(err, c?.name ?? '', c?.uniqueFields ?? []);
  if (failure?.kind === 'unique' && c) {
    return new HttpProblem('unique', `Another ${c.resource.toLowerCase()} already has this ${failure.field}`, [
      { field: failure.field, message: 'must be unique; another record has this value' },
    ]);
  }
  if (failure?.kind === 'unavailable') {
    const kind = failure.timeout ? 'database-timeout' : 'database-unavailable';
    return new HttpProblem(kind, failure.timeout ? 'The database did not answer in time' : 'The database is unavailable', undefined, {
      'Retry-After': String(RETRY_AFTER_SECONDS),
    });
  }
  return undefined;
}

export function errorHandler(logger: Logger, bodyLimit: number) {
  return (err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const requestId = res.locals.requestId as string | undefined;
    if (res.headersSent) return logger.error({ err, requestId }, 'error after the answer began');
    const problem = toProblem(err, res.locals.operation as Operation | undefined, bodyLimit);
    if (problem?.status === 503) logger.warn({ err, requestId }, 'database unavailable');
    if (problem) return sendProblem(res, problem);
    logger.error({ err, requestId }, 'unexpected error');
    sendProblem(res, new HttpProblem('internal', 'An unexpected error occurred'));
  };
}

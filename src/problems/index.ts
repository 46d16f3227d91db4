import { STATUS_CODES } from 'node:http';
import type { Response } from 'express';
import type { components } from '../generated/openapi';

export type Problem = components['schemas']['Problem'];
export type FieldError = components['schemas']['FieldError'];

/**
 * A failure that the contract answers with a status of its own. Handlers and middleware throw it;
 * the app's one error handler (errors.ts) writes it, like every other failure, as problem+json.
 */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly errors?: FieldError[],
    /** Headers the status calls for: Allow, Retry-After, WWW-Authenticate. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
    this.name = 'HttpProblem';
  }
}

/** A 400 naming each field or parameter that broke the contract. */
export function invalid(errors: FieldError[]): HttpProblem {
  return new HttpProblem(400, 'Request validation failed', errors);
}

/**
 * An RFC 9457 body. `title` is always the status phrase, `type` about:blank, and `request_id` the
 * request's id, so that a user can quote it and it can be found in the log.
 */
export function problemBody(status: number, detail: string, errors?: FieldError[], requestId?: string): Problem {
  const body: Problem = { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail };
  if (requestId) body.request_id = requestId;
  if (errors?.length) body.errors = errors;
  return body;
}

/** Writes a problem; only the error handler calls this. */
export function sendProblem(res: Response, problem: HttpProblem): void {
  res.set(problem.headers);
  const body = problemBody(problem.status, problem.detail, problem.errors, res.locals.requestId as string | undefined);
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(body));
}

import type { Response } from 'express';
import type { components } from '../generated/openapi';
import { PROBLEM_TYPES, type ProblemKind, problemType } from './types';

export { PROBLEM_KINDS, PROBLEM_TYPES, type ProblemKind, type ProblemType, kindOfType, problemType } from './types';

export type Problem = components['schemas']['Problem'];
export type FieldError = components['schemas']['FieldError'];

/**
 * A failure that the contract answers with a status of its own. Handlers and middleware throw it,
 * naming its kind (types.ts), which gives the status; the app's one error handler (errors.ts)
 * writes it, like every other failure, as problem+json.
 */
export class HttpProblem extends Error {
  readonly status: number;

  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly errors?: FieldError[],
    /** Headers the kind calls for: Allow, Retry-After, WWW-Authenticate. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
    this.name = 'HttpProblem';
    this.status = PROBLEM_TYPES[kind].status;
  }
}

/** A 400 naming each field or parameter that broke the contract. */
export function invalid(errors: FieldError[]): HttpProblem {
  return new HttpProblem('validation', 'Request validation failed', errors);
}

/**
 * An RFC 9457 body: `type` is the kind's page (`/problems/<kind>`, resolved against the service),
 * `title` the kind's, the same for every problem of the kind, `detail` this problem's, and
 * `request_id` the request's id, so that a user can quote it and it can be found in the log.
 */
export function problemBody(kind: ProblemKind, detail: string, errors?: FieldError[], requestId?: string): Problem {
  const { status, title } = PROBLEM_TYPES[kind];
  const body: Problem = { type: problemType(kind), title, status, detail };
  if (requestId) body.request_id = requestId;
  if (errors?.length) body.errors = errors;
  return body;
}

/** Writes a problem; only the error handler calls this. */
export function sendProblem(res: Response, problem: HttpProblem): void {
  res.set(problem.headers);
  const body = problemBody(problem.kind, problem.detail, problem.errors, res.locals.requestId as string | undefined);
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(body));
}

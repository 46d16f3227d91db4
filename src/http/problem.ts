import { STATUS_CODES } from 'node:http';
import type { Response } from 'express';
import type { components } from '../generated/openapi';

export type Problem = components['schemas']['Problem'];
export type FieldError = components['schemas']['FieldError'];

/**
 * Answers an RFC 9457 problem. `title` is always the status phrase, `type` about:blank, and
 * `request_id` the request's id, so that a user can quote it and it can be found in the log.
 */
export function sendProblem(res: Response, status: number, detail: string, errors?: FieldError[]): void {
  const body: Problem = { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail };
  const requestId = res.locals.requestId as string | undefined;
  if (requestId) body.request_id = requestId;
  if (errors?.length) body.errors = errors;
  res.status(status).type('application/problem+json').send(JSON.stringify(body));
}

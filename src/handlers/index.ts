import { type BulkVerb, bulkOperationIds, collectionOf, collections, headOperationIds, operationIds, type Verb } from '../collections';
import { isRetryable, MAX_TRIES, retryDelay } from '../db/retry';
import type { FieldError } from '../problems';
import { filters, type ListQuery } from './list-query';
import { bulkHandlers } from './bulk';
import { type Handler, type HandlerDeps, recordHandlers } from './records';

/**
 * The list query's own rules that the spec cannot state (a range given upside down, a cursor
 * with a page), for a request that also failed the spec: so that one answer names every problem.
 */
export function listQueryErrors(operationId: string, query: ListQuery): FieldError[] {
  const c = collectionOf(operationId);
  if (!c || (operationIds(c).list !== operationId && operationIds(c).export !== operationId)) return [];
  return filters(c, query).errors;
}

/** Every record operation's handler, keyed by operationId. */
export function operationHandlers(deps: HandlerDeps): Record<string, Handler> {
  const handlers: Record<string, Handler> = {};
  for (const c of collections) {
    const steps = recordHandlers(c, deps);
    const ids = operationIds(c);
    for (const verb of Object.keys(ids) as Verb[])
      handlers[ids[verb]] = retrying(steps[verb], verb === 'list' || verb === 'get' || verb === 'export');
    for (const [head, verb] of Object.entries(headOperationIds(c))) handlers[head] = handlers[ids[verb]];
    const bulk = bulkHandlers(c, deps);
    const bulkIds = bulkOperationIds(c);
    for (const verb of Object.keys(bulkIds) as BulkVerb[]) handlers[bulkIds[verb]] = retrying(bulk[verb], false);
  }
  return handlers;
}

/**
 * Runs a step again when the database rolled its work back for a reason that a second try can
 * clear (a conflict between cluster nodes, a deadlock, a node not ready): each step's writes are
 * one statement or one transaction. Reads also retry after a lost connection. Whatever still
 * fails goes to the error handler (a 503 with Retry-After for the database's failures).
 */
function retrying(step: Handler, readOnly: boolean): Handler {
  return async (ctx, req, res) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await step(ctx, req, res);
        return;
      } catch (err) {
        if (res.headersSent || attempt >= MAX_TRIES || !isRetryable(err, readOnly)) throw err;
        await retryDelay(attempt);
      }
    }
  };
}

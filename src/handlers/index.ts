import { collections, operationIds, type Verb } from '../collections';
import { classifyDbError } from '../db/errors';
import { type FieldError, sendProblem } from '../http/problem';
import { filters, type ListQuery } from './list-query';
import { type Handler, type HandlerDeps, recordHandlers } from './records';

/**
 * Every operation's handler, keyed by operationId. A database failure that the contract names
 * (a uniqueness conflict, an unreachable database) is answered here, where the collection is known.
 */
/**
 * The list query's own rules that the spec cannot state (a range given upside down, a cursor
 * with a page), for a request that also failed the spec: so that one answer names every problem.
 */
export function listQueryErrors(operationId: string | undefined, query: ListQuery): FieldError[] {
  const c = collections.find((x) => operationIds(x).list === operationId);
  if (!c) return [];
  return filters(c, query).errors;
}

export function operationHandlers(deps: HandlerDeps): Record<string, Handler> {
  const handlers: Record<string, Handler> = {};
  for (const c of collections) {
    const steps = recordHandlers(c, deps);
    const ids = operationIds(c);
    for (const verb of Object.keys(ids) as Verb[]) {
      const step = steps[verb];
      handlers[ids[verb]] = async (ctx, req, res) => {
        try {
          await step(ctx, req, res);
        } catch (err) {
          const failure = classifyDbError(err, c.name, c.uniqueFields);
          if (failure?.kind === 'unique') {
            return sendProblem(res, 409, `Another ${c.resource.toLowerCase()} already has this ${failure.field}`, [
              { field: failure.field, message: 'must be unique; another record has this value' },
            ]);
          }
          throw err;
        }
      };
    }
  }
  return handlers;
}

import { collections, operationIds, type Verb } from '../collections';
import { classifyDbError } from '../db/errors';
import { sendProblem } from '../http/problem';
import { type Handler, type HandlerDeps, recordHandlers } from './records';

/**
 * Every operation's handler, keyed by operationId. A database failure that the contract names
 * (a uniqueness conflict, an unreachable database) is answered here, where the collection is known.
 */
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

import type { Context } from 'openapi-backend';
import type { BulkVerb, Collection } from '../collections';
import { BulkRefused, deleteRecords, insertRecords } from '../db/bulk';
import { dbTimestamp } from '../db/time';
import { sendJson, stringifier } from './json';
import { HttpProblem } from '../problems';
import { writeIdempotently } from './idempotency';
import { answerMinimal } from './prefer';
import type { Handler, HandlerDeps } from './records';
import { recordSerializer, writeFields, writeValues } from './serialize';

/**
 * Bulk create and bulk delete of one collection: each all or none, in one transaction
 * (docs/adr/0013-bulk-writes.md). The spec bounds a batch (1,000) and validates every record
 * before this runs, so a 400 names each `[index].field` and nothing is written.
 */
export function bulkHandlers(c: Collection, deps: HandlerDeps): Record<BulkVerb, Handler> {
  const { db } = deps;
  const fields = writeFields(deps.spec, c.resource);
  const serialize = recordSerializer(deps.spec, c);
  const noun = c.resource.toLowerCase();

  function refusal(err: unknown): unknown {
    if (!(err instanceof BulkRefused)) return err;
    const { reason } = err;
    if (reason.kind === 'unique') {
      return new HttpProblem(
        'unique',
        `The ${noun} at [${reason.index}] has ${/^[aeiou]/i.test(reason.field) ? 'an' : 'a'} ${reason.field} that another ${noun} already has; nothing was created`,
        [
          {
            field: `[${reason.index}].${reason.field}`,
            message: 'must be unique; a stored record or one earlier in this request has this value',
          },
        ],
      );
    }
    return new HttpProblem(
      'not-found',
      `No ${c.name} with ids ${reason.ids.map((m) => m.id).join(', ')}; nothing was deleted`,
      reason.ids.map((m) => ({ field: `ids[${m.index}]`, message: `no ${noun} has id ${m.id}` })),
    );
  }

  return {
    async bulkCreate(ctx: Context, req, res) {
      const body = ctx.request.requestBody as Record<string, unknown>[];
      const stamp = dbTimestamp();
      const records = body.map((b) => ({ ...writeValues(fields, b, true), created_at: stamp, updated_at: stamp }));
      const answer = (rows: Parameters<typeof serialize>[0][]) => stringifier(ctx.operation, 201)({ results: rows.map(serialize) });
      const minimal = answerMinimal(req, res, c.name);
      const outcome = await writeIdempotently(
        db,
        c.name,
        req,
        res,
        body,
        (q) => insertRecords(q, c.name, records, c.uniqueFields),
        (rows) =>
          minimal ? { status: 204, body: '', location: null, etag: null } : { status: 201, body: answer(rows), location: null, etag: null },
      ).catch((err: unknown) => {
        throw refusal(err);
      });
      if (outcome.kind !== 'created') return outcome.send(res);
      if (minimal) return void res.status(204).end();
      sendJson(res, 201, answer(outcome.row));
    },

    async bulkDelete(ctx: Context, _req, res) {
      const { ids } = ctx.request.requestBody as { ids: number[] };
      await deleteRecords(db, c.name, ids).catch((err: unknown) => {
        throw refusal(err);
      });
      res.status(204).end();
    },
  };
}

import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Db } from '../db/connection';
import { claimKey, completeKey, releaseKey } from '../db/idempotency';
import { retrying } from '../db/retry';
import { insertRecord, type Row, type Values } from '../db/records';
import { etag } from '../http/conditional';
import { HttpProblem } from '../http/problem';

type Outcome = { kind: 'created'; row: Row } | { kind: 'replay'; send(res: Response): void };

/** JSON with sorted keys, so that the same body hashes the same however its keys are ordered. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Creates a record; with an Idempotency-Key, at most once per key and body. The record and the
 * stored response commit together, so a replay always describes a record that was created.
 * Only a 201 is stored: if the create fails, the claim is given up and a retry runs it again.
 */
export async function createIdempotently(
  db: Db,
  collection: string,
  req: Request,
  body: unknown,
  record: Values,
  serialize: (row: Row) => unknown,
): Promise<Outcome> {
  const key = req.get('idempotency-key');
  if (key === undefined) return { kind: 'created', row: await insertRecord(db, collection, record) };

  const hash = createHash('sha256').update(canonical(body)).digest('hex');
  const claim = await claimKey(db, collection, key, hash);
  const field = 'Idempotency-Key';
  if (claim.kind === 'running') {
    throw refused(409, 'A request with this Idempotency-Key is still running; retry later', 'a request with this key is still running');
  }
  if (claim.kind === 'mismatch') {
    throw refused(422, 'This Idempotency-Key was used with a different request body', 'was used with a different request body');
  }
  if (claim.kind === 'done') {
    const { response } = claim;
    return {
      kind: 'replay',
      send(res) {
        if (response.location) res.location(response.location);
        if (response.etag) res.set('ETag', response.etag);
        res.status(response.status).set('Idempotent-Replayed', 'true').type('application/json').send(response.body);
      },
    };
  }
  try {
    const row = await db.transaction(async (trx) => {
      const created = await insertRecord(trx, collection, record);
      await completeKey(trx, collection, key, {
        status: 201,
        body: JSON.stringify(serialize(created)),
        location: `/api/${collection}/${created.id}/`,
        etag: etag(created.version),
      });
      return created;
    });
    return { kind: 'created', row };
  } catch (err) {
    // Released even after a conflict, so that the step, run again, can claim the key anew.
    await retrying(() => releaseKey(db, collection, key)).catch(() => {});
    throw err;
  }

  function refused(status: number, detail: string, message: string): HttpProblem {
    return new HttpProblem(status, detail, [{ field, message }]);
  }
}

import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { principalOf } from '../auth/middleware';
import type { Db } from '../db/connection';
import { claimKey, completeKey, type KeyScope, OPEN_CALLER, releaseKey, type StoredResponse } from '../db/idempotency';
import { retrying } from '../db/retry';
import { insertRecord, type Queryable, type Row, type Values } from '../db/records';
import { etag } from '../http/conditional';
import { HttpProblem } from '../http/problem';

type Outcome<T = Row> = { kind: 'created'; row: T } | { kind: 'replay'; send(res: Response): void };

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
export function createIdempotently(
  db: Db,
  collection: string,
  req: Request,
  res: Response,
  body: unknown,
  record: Values,
  serialize: (row: Row) => unknown,
): Promise<Outcome> {
  return writeIdempotently(
    db,
    collection,
    req,
    res,
    body,
    (q) => insertRecord(q, collection, record),
    (created) => ({
      status: 201,
      body: JSON.stringify(serialize(created)),
      location: `/api/${collection}/${created.id}/`,
      etag: etag(created.version),
    }),
  );
}

/** Whose keys a request uses: its principal's (a token's name, `jwt:<sub>`), or the open API's. */
export function callerOf(res: Response): string {
  return principalOf(res)?.name ?? OPEN_CALLER;
}

/**
 * Runs `write` (one statement or transaction on the Queryable it is given); with an
 * Idempotency-Key, at most once per key and body, its response (`stored`) committed with it.
 * Keys are kept per collection and caller: a single create and a bulk create share them (their
 * bodies differ, so one key reused across them is a 422); two callers never do.
 */
export async function writeIdempotently<T>(
  db: Db,
  collection: string,
  req: Request,
  res: Response,
  body: unknown,
  write: (q: Queryable) => Promise<T>,
  stored: (result: T) => StoredResponse,
): Promise<Outcome<T>> {
  const key = req.get('idempotency-key');
  if (key === undefined) return { kind: 'created', row: await write(db) };

  const scope: KeyScope = { collection, caller: callerOf(res), key };
  const hash = createHash('sha256').update(canonical(body)).digest('hex');
  const claim = await claimKey(db, scope, hash);
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
      const result = await write(trx);
      await completeKey(trx, scope, stored(result));
      return result;
    });
    return { kind: 'created', row };
  } catch (err) {
    // Released even after a conflict, so that the step, run again, can claim the key anew.
    await retrying(() => releaseKey(db, scope)).catch(() => {});
    throw err;
  }

  function refused(status: number, detail: string, message: string): HttpProblem {
    return new HttpProblem(status, detail, [{ field, message }]);
  }
}

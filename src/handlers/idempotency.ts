import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { principalOf } from '../auth/middleware';
import type { Db } from '../db/connection';
import { claimKey, completeKey, type KeyScope, OPEN_CALLER, releaseKey, type StoredResponse } from '../db/idempotency';
import { retrying } from '../db/retry';
import { insertRecord, type Queryable, type Row, type Values } from '../db/records';
import { etag } from './conditional';
import { HttpProblem } from '../problems';

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

/** Seconds a twin of a running request is told to wait: a create takes milliseconds. */
export const RUNNING_RETRY_AFTER_SECONDS = 1;

/**
 * Keys whose request is running in this process, per database, with their body's hash. SQLite's one
 * connection would queue a twin behind the running create until it is done (and then replay it):
 * checked first, a twin gets the 409 that the claim row gives it on MySQL and in other processes.
 */
const inFlight = new WeakMap<Db, Map<string, string>>();

/**
 * Creates a record; with an Idempotency-Key, at most once per key and body. The record and the
 * stored response commit together, so a replay always describes a record that was created.
 * Only a success is stored (201, or 204 without `serialize`: the answer had no body); if the
 * create fails, the claim is given up and a retry runs it again.
 */
export function createIdempotently(
  db: Db,
  collection: string,
  req: Request,
  res: Response,
  body: unknown,
  record: Values,
  serialize: ((row: Row) => unknown) | undefined,
): Promise<Outcome> {
  return writeIdempotently(
    db,
    collection,
    req,
    res,
    body,
    (q) => insertRecord(q, collection, record),
    (created) => ({
      status: serialize ? 201 : 204,
      body: serialize ? JSON.stringify(serialize(created)) : '',
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
  let running = inFlight.get(db);
  if (!running) inFlight.set(db, (running = new Map<string, string>()));
  const id = JSON.stringify([collection, scope.caller, key]);
  const twin = running.get(id);
  if (twin !== undefined) throw twin === hash ? stillRunning() : reusedKey();
  running.set(id, hash);
  try {
    return await claimAndWrite(db, scope, hash, write, stored);
  } finally {
    running.delete(id);
  }
}

async function claimAndWrite<T>(
  db: Db,
  scope: KeyScope,
  hash: string,
  write: (q: Queryable) => Promise<T>,
  stored: (result: T) => StoredResponse,
): Promise<Outcome<T>> {
  const claim = await claimKey(db, scope, hash);
  if (claim.kind === 'running') throw stillRunning();
  if (claim.kind === 'mismatch') throw reusedKey();
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
}

/** 409: a twin (same caller, collection and key) is still running; retrying later finds it done. */
function stillRunning(): HttpProblem {
  return new HttpProblem(
    'idempotency-in-flight',
    'A request with this Idempotency-Key is still running; retry later',
    [{ field: 'Idempotency-Key', message: 'a request with this key is still running' }],
    { 'Retry-After': String(RUNNING_RETRY_AFTER_SECONDS) },
  );
}

function reusedKey(): HttpProblem {
  return new HttpProblem('idempotency-mismatch', 'This Idempotency-Key was used with a different request body', [
    { field: 'Idempotency-Key', message: 'was used with a different request body' },
  ]);
}

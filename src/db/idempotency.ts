import type { Db } from './connection';
import type { Queryable } from './records';
import { dbTimestamp } from './time';

/** What a create with an Idempotency-Key finds when it claims the key. */
export type Claim = { kind: 'claimed' } | { kind: 'running' } | { kind: 'mismatch' } | { kind: 'done'; response: StoredResponse };

export interface StoredResponse {
  status: number;
  body: string;
  location: string | null;
  etag: string | null;
}

/**
 * Whose key it is: a key is unique per collection and caller, so that one caller's key never
 * answers (or blocks) another's request. `caller` is the principal's name, or OPEN_CALLER.
 */
export interface KeyScope {
  collection: string;
  caller: string;
  key: string;
}

/**
 * The caller of every request to an API without tokens, and the owner of the keys stored before
 * keys had callers (migration 014). No principal is named '' (token names and `jwt:<sub>` are not empty).
 */
export const OPEN_CALLER = '';

const TABLE = 'idempotency_keys';

/** A row of idempotency_keys (migrations 002 and 014). */
interface KeyRow {
  id: number;
  collection: string;
  caller: string;
  idem_key: string;
  request_hash: string;
  state: 'running' | 'done';
  response_status: number | null;
  response_body: string | null;
  response_location: string | null;
  response_etag: string | null;
  created_at: string;
}
const KEEP_MS = 24 * 60 * 60 * 1000;
/** A claim still "running" after this long belongs to a request that died; a retry takes it over. */
const ABANDONED_MS = 5 * 60 * 1000;

function isDuplicate(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

const where = (s: KeyScope) => ({ collection: s.collection, caller: s.caller, idem_key: s.key });

/**
 * Claims the key for a request whose body hashes to `hash`. The claim is its own committed row, so
 * a second request with the key sees "running" instead of waiting on a lock. The row is read
 * before anything is written: on SQLite a write would wait for the file's lock, which a running
 * twin in another process holds until it commits, and would then see "done" instead of "running".
 */
export async function claimKey(db: Db, scope: KeyScope, hash: string): Promise<Claim> {
  const now = Date.now();
  const expired = dbTimestamp(now - KEEP_MS);
  for (let attempt = 0; attempt < 3; attempt++) {
    const row = await db<KeyRow>(TABLE).where(where(scope)).first();
    if (!row || String(row.created_at) < expired) {
      // Only a request that will write anyway clears the expired keys (its own included).
      await db(TABLE).where('created_at', '<', expired).delete();
      try {
        await db(TABLE).insert({ ...where(scope), request_hash: hash, state: 'running', created_at: dbTimestamp(now) });
        return { kind: 'claimed' };
      } catch (err) {
        if (!isDuplicate(err)) throw err;
      }
      continue; // claimed by a twin meanwhile: read it
    }
    if (row.request_hash !== hash) return { kind: 'mismatch' };
    if (row.state === 'done') {
      return {
        kind: 'done',
        response: {
          status: Number(row.response_status),
          body: String(row.response_body),
          location: row.response_location,
          etag: row.response_etag,
        },
      };
    }
    if (String(row.created_at) >= dbTimestamp(now - ABANDONED_MS)) return { kind: 'running' };
    const taken = await db(TABLE)
      .where({ id: row.id, state: 'running', created_at: row.created_at })
      .update({ created_at: dbTimestamp(now) });
    if (taken) return { kind: 'claimed' };
  }
  return { kind: 'running' };
}

/** Stores the response of a claimed key; in the transaction that created the record. */
export async function completeKey(trx: Queryable, scope: KeyScope, response: StoredResponse): Promise<void> {
  await trx(TABLE)
    .where({ ...where(scope), state: 'running' })
    .update({
      state: 'done',
      response_status: response.status,
      response_body: response.body,
      response_location: response.location,
      response_etag: response.etag,
    });
}

/** Gives a claim up after the create failed, so that a retry runs the create again. */
export async function releaseKey(db: Db, scope: KeyScope): Promise<void> {
  await db(TABLE)
    .where({ ...where(scope), state: 'running' })
    .delete();
}

import type { Knex } from 'knex';
import { type Db, isMysql, openSibling } from './connection';
import type { Filter } from './filters';
import type { OrderKey } from './order';
import type { Row, SeekRequest, TableSpec } from './records';

/** A cursor page's query, with search or without (the caller's choice). */
export type Seek = (pool: Db, spec: TableSpec, request: SeekRequest) => Promise<Row[]>;

export interface WalkRequest {
  terms: readonly string[];
  filters: readonly Filter[];
  /** The order, ending with a unique key (as for cursor pages). */
  order: readonly OrderKey[];
}

export interface WalkOptions {
  /** Rows fetched per query; memory holds one batch at a time. */
  batchSize?: number;
  /** Stops the walk before its next query (a client that went away). */
  signal?: AbortSignal;
}

export const WALK_BATCH = 1000;

/**
 * Every row a list query matches, in its order, as a keyset walk in batches (cursor pagination's
 * seek query), so that a walk over millions of rows holds no connection and one batch at a time.
 */
export async function* walkRecords(
  db: Db,
  seek: Seek,
  spec: TableSpec,
  request: WalkRequest,
  options: WalkOptions = {},
): AsyncGenerator<Row> {
  const limit = options.batchSize ?? WALK_BATCH;
  let after: Knex.Value[] | undefined;
  for (;;) {
    if (options.signal?.aborted) return;
    const rows = await seek(db, spec, { ...request, after, backward: false, limit });
    for (const row of rows) yield row;
    if (rows.length < limit) return;
    const last = rows[rows.length - 1];
    after = request.order.map((key) => (last[key.column] ?? null) as Knex.Value);
  }
}

/**
 * walkRecords inside one read transaction on a connection of its own: every batch sees the
 * table as the first did, so a row changed meanwhile is neither repeated nor skipped. MySQL reads
 * one REPEATABLE READ snapshot, SQLite one WAL read transaction that writers do not wait for.
 */
export async function* walkSnapshot(
  db: Db,
  seek: Seek,
  spec: TableSpec,
  request: WalkRequest,
  options: WalkOptions = {},
): AsyncGenerator<Row> {
  const reader = openSibling(db);
  try {
    const trx = await reader.transaction(isMysql(db) ? { isolationLevel: 'repeatable read' } : undefined);
    try {
      yield* walkRecords(trx, seek, spec, request, options);
    } finally {
      // Read only: ending it either way changes nothing; a connection already lost is let go.
      await trx.commit().catch(() => undefined);
    }
  } finally {
    await reader.destroy();
  }
}

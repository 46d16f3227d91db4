import type { Knex } from 'knex';
import type { Db } from './connection';
import type { Filter } from './filters';
import type { OrderKey } from './order';
import { type Row, seekRecords, type TableSpec } from './records';

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
export async function* walkRecords(db: Db, spec: TableSpec, request: WalkRequest, options: WalkOptions = {}): AsyncGenerator<Row> {
  const limit = options.batchSize ?? WALK_BATCH;
  let after: Knex.Value[] | undefined;
  for (;;) {
    if (options.signal?.aborted) return;
    const rows = await seekRecords(db, spec, { ...request, after, backward: false, limit });
    for (const row of rows) yield row;
    if (rows.length < limit) return;
    const last = rows[rows.length - 1];
    after = request.order.map((key) => (last[key.column] ?? null) as Knex.Value);
  }
}

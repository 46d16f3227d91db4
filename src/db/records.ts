import type { Knex } from 'knex';
import { type Db, inTransaction, isMysql } from './connection';
import { countAll } from './counts';
import { applyFilters } from './filters';
import { applyAfter, reversed } from './keyset';
import { applyOrder } from './order';
import {
  countRows,
  DEFERRED_JOIN_OFFSET,
  type ListRequest,
  type ListResult,
  pageRows,
  type Queryable,
  type Row,
  type SeekRequest,
  type TableSpec,
  type Values,
} from './pages';
import { compiledRows, PARAM } from './statements';

export type { ListRequest, ListResult, Queryable, Row, SeekRequest, TableSpec, Values };

/** What is told of every write of records: the writer and the table (search keeps its index by it). */
export type WriteListener = (db: Queryable, table: string) => void;
const writeListeners: WriteListener[] = [];

/** Calls `listener` after each write of records, in the writer's turn (not for bulk loads). */
export function onRecordsWritten(listener: WriteListener): void {
  writeListeners.push(listener);
}

function recordsWritten(db: Queryable, table: string): void {
  for (const listener of writeListeners) listener(db, table);
}

/**
 * The list pipeline's database steps without search: filter, order, paginate (serializing is the
 * caller's). The list code (src/handlers/pages.ts) hands a list with search terms to search.
 */
export async function listRows(pool: Db, spec: TableSpec, request: ListRequest): Promise<ListResult> {
  const filtered = () => withFilters(pool(spec.table), request.filters);
  const count = request.filters.length ? await countRows(filtered()) : await countAll(pool, spec.table);
  const offset = (request.page - 1) * request.pageSize;
  if (request.page > 1 && offset >= count) return { count, pastEnd: true };
  if (!count) return { count, rows: [] }; // exact: there is no row to read
  const page = { limit: request.pageSize, offset };
  return { count, rows: await pageRows(pool, spec.table, filtered(), request.order, page, offset >= DEFERRED_JOIN_OFFSET) };
}

/**
 * Cursor pagination's query: filter, then seek past the boundary with an index-friendly
 * condition instead of an OFFSET. Rows come in the order's direction even when walking back.
 */
export async function seekRows(pool: Db, spec: TableSpec, request: SeekRequest): Promise<Row[]> {
  const order = request.backward ? reversed(request.order) : request.order;
  let found: Row[];
  if (!request.filters.length && !request.after) {
    // A first page with no filter (the statement every cursor walk starts with): its SQL depends
    // on the order and the limit only, and is compiled once.
    const key = `seek ${spec.table} ${JSON.stringify(order)} ${request.limit}`;
    found = await compiledRows<Row>(pool, key, (q) => {
      const query = q(spec.table);
      applyOrder(query, order, isMysql(pool));
      return query.select('*').limit(request.limit);
    });
  } else {
    const query = withFilters(pool(spec.table), request.filters);
    if (request.after) applyAfter(query, order, request.after as Knex.Value[], isMysql(pool));
    found = await pageRows(pool, spec.table, query, order, { limit: request.limit, offset: 0 }, false);
  }
  return request.backward ? found.reverse() : found;
}

function withFilters(query: Knex.QueryBuilder, filters: ListRequest['filters']): Knex.QueryBuilder {
  applyFilters(query, filters);
  return query;
}

export async function findRecord(db: Queryable, table: string, id: number): Promise<Row | undefined> {
  const [row] = await compiledRows<Row>(db, `find ${table}`, (q) => q(table).where({ id: PARAM }).first(), [id]);
  return row;
}

/**
 * Inserts a row and returns it as stored: the values, its id, and version 1.
 * No read-back: the columns store the values as given (the serializer formats them).
 */
export async function insertRecord(db: Queryable, table: string, values: Values): Promise<Row> {
  const [id] = await db(table).insert(values);
  recordsWritten(db, table);
  return { ...values, id: Number(id), version: 1 };
}

/**
 * Inserts rows with one statement (the triggers still run per row) and returns them as stored,
 * in order. Their ids are consecutive in steps of auto_increment_increment on MySQL (Galera sets
 * it to the cluster's size): one INSERT ... VALUES of known length takes its ids at once. SQLite,
 * one writer, numbers them in a row up to the last.
 */
export async function insertRows(db: Queryable, table: string, rows: readonly Values[]): Promise<Row[]> {
  const [id] = await db(table).insert(rows);
  recordsWritten(db, table);
  let first = Number(id) - (rows.length - 1);
  let step = 1;
  if (isMysql(db)) {
    first = Number(id);
    const [[{ increment }]] = (await db.raw('SELECT @@auto_increment_increment AS increment')) as [[{ increment: number }]];
    step = Number(increment);
  }
  return rows.map((values, i) => ({ ...values, id: first + i * step, version: 1 }));
}

/**
 * Which versions a conditional write accepts (If-Match `versions`, If-None-Match `except`).
 * The check is part of the UPDATE/DELETE, so of concurrent writers with one version, one wins.
 */
export type VersionCondition = { versions?: readonly number[]; except?: readonly number[] | '*' };

function accepts(condition: VersionCondition, version: number): boolean {
  if (condition.versions && !condition.versions.includes(version)) return false;
  return condition.except !== '*' && !condition.except?.includes(version);
}

/** The write's WHERE for its condition; false when no version passes, so nothing need run. */
function restrict(query: Knex.QueryBuilder, condition: VersionCondition): boolean {
  if (condition.except === '*') return false;
  if (condition.versions) query.whereIn('version', [...condition.versions]);
  if (condition.except?.length) query.whereNotIn('version', [...condition.except]);
  return true;
}

/**
 * Returns the updated row, or undefined when no record has this id (and accepted version); with
 * no values, the record as it is. A read then a write conditioned on the version read is cheaper
 * than a transaction's four round trips; a transaction remains for a write that lands between.
 */
export async function updateRecord(
  db: Queryable,
  table: string,
  id: number,
  values: Values,
  condition: VersionCondition = {},
): Promise<Row | undefined> {
  // Nothing to change (an empty PATCH): no write, no new version; the condition still decides.
  if (!Object.keys(values).length) {
    const found = await findRecord(db, table, id);
    return found && accepts(condition, found.version) ? found : undefined;
  }
  const row = inTransaction(db) ? await updateLocked(db, table, id, values, condition) : await updateRead(db, table, id, values, condition);
  if (row) recordsWritten(db, table);
  return row;
}

async function updateRead(db: Db, table: string, id: number, values: Values, condition: VersionCondition): Promise<Row | undefined> {
  const before = await findRecord(db, table, id);
  if (!before) return undefined;
  if (!accepts(condition, before.version)) return undefined;
  const version = before.version + 1;
  const changed = await db(table)
    .where({ id, version: before.version })
    .update({ ...values, version });
  if (changed) return { ...before, ...values, version };
  return db.transaction((trx) => updateLocked(trx, table, id, values, condition));
}

/** The update inside a transaction: the write, then the read-back. */
async function updateLocked(
  db: Knex.Transaction,
  table: string,
  id: number,
  values: Values,
  condition: VersionCondition,
): Promise<Row | undefined> {
  const query = db(table).where({ id });
  if (!restrict(query, condition)) return undefined;
  const changed = await query.update({ ...values, version: db.raw('?? + 1', ['version']) });
  if (!changed) return undefined;
  return findRecord(db, table, id);
}

export async function deleteRecord(db: Queryable, table: string, id: number, condition: VersionCondition = {}): Promise<boolean> {
  const query = db(table).where({ id });
  if (!restrict(query, condition)) return false;
  const deleted = (await query.delete()) > 0;
  if (deleted) recordsWritten(db, table);
  return deleted;
}

import type { Knex } from 'knex';
import { type Db, isMysql } from './connection';
import { countAll } from './counts';
import { applyFilters, type Filter } from './filters';
import { applyAfter, reversed } from './keyset';
import { applyOrder, type OrderKey } from './order';
import { applySearch, foldCollation } from './search';

/** The pool, or a transaction on it. */
export type Queryable = Db | Knex.Transaction;
export type Row = Record<string, unknown> & { id: number | string; version: number };
export type Values = Record<string, unknown>;

export interface TableSpec {
  table: string;
  searchFields: readonly string[];
}

export interface ListRequest {
  terms: readonly string[];
  filters: readonly Filter[];
  order: readonly OrderKey[];
  page: number;
  pageSize: number;
}

/** From this offset on, a page is read as ids first (see listRecords). */
const DEFERRED_JOIN_OFFSET = 100;

export type ListResult = { count: number; rows: Row[] } | { count: number; pastEnd: true };

/** The list pipeline's database steps: filter, order, paginate (serializing is the caller's). */
export async function listRecords(db: Db, spec: TableSpec, request: ListRequest): Promise<ListResult> {
  const filtered = db(spec.table);
  if (request.terms.length) applySearch(filtered, spec.searchFields, request.terms, await foldCollation(db));
  applyFilters(filtered, request.filters);

  const count = request.terms.length || request.filters.length ? await countRows(filtered) : await countAll(db, spec.table);
  const offset = (request.page - 1) * request.pageSize;
  if (request.page > 1 && offset >= count) return { count, pastEnd: true };

  applyOrder(filtered, request.order, isMysql(db));
  if (offset < DEFERRED_JOIN_OFFSET) return { count, rows: await filtered.select('*').limit(request.pageSize).offset(offset) };
  // Deep pages: skip over ids only (an index-only scan for the default order), then fetch the
  // page's rows by primary key. Skipping whole rows made MySQL scan and sort the table.
  const ids: (number | string)[] = await filtered.limit(request.pageSize).offset(offset).pluck('id');
  const rows: Row[] = ids.length ? await db(spec.table).whereIn('id', ids) : [];
  const position = new Map(ids.map((id, i) => [Number(id), i]));
  rows.sort((a, b) => position.get(Number(a.id))! - position.get(Number(b.id))!);
  return { count, rows };
}

async function countRows(query: Knex.QueryBuilder): Promise<number> {
  const [{ n }] = await query.clone().count({ n: '*' });
  return Number(n);
}

export interface SeekRequest {
  terms: readonly string[];
  filters: readonly Filter[];
  /** The order, ending with a unique key. */
  order: readonly OrderKey[];
  /** Values of the order's keys in the boundary row; rows strictly beyond it are returned. */
  after?: readonly unknown[];
  /** Walk the order backwards from the boundary (for a "previous" page). */
  backward: boolean;
  limit: number;
}

/**
 * Cursor pagination's query: filter, then seek past the boundary with an index-friendly
 * condition instead of an OFFSET. Rows come in the order's direction even when walking back.
 */
export async function seekRecords(db: Db, spec: TableSpec, request: SeekRequest): Promise<Row[]> {
  const query = db(spec.table);
  if (request.terms.length) applySearch(query, spec.searchFields, request.terms, await foldCollation(db));
  applyFilters(query, request.filters);
  const order = request.backward ? reversed(request.order) : request.order;
  if (request.after) applyAfter(query, order, request.after as Knex.Value[], isMysql(db));
  applyOrder(query, order, isMysql(db));
  const rows: Row[] = await query.select('*').limit(request.limit);
  return request.backward ? rows.reverse() : rows;
}

export async function findRecord(db: Queryable, table: string, id: number): Promise<Row | undefined> {
  return db(table).where({ id }).first();
}

/**
 * Inserts a row and returns it as stored: the values, its id, and version 1 (the column's
 * default). No read-back: the columns store the values as given (text, dates, and prices,
 * which the serializer formats).
 */
export async function insertRecord(db: Queryable, table: string, values: Values): Promise<Row> {
  const [id] = await db(table).insert(values);
  return { ...values, id: Number(id), version: 1 };
}

/**
 * Which versions a conditional write accepts: any (no If-Match, or `*`), or a list. The check
 * is part of the UPDATE/DELETE itself, so of concurrent writers with one version, one wins.
 */
export type VersionCondition = { versions?: readonly number[] };

/** Returns the updated row, or undefined when no record has this id (and accepted version). */
export async function updateRecord(
  db: Queryable,
  table: string,
  id: number,
  values: Values,
  condition: VersionCondition = {},
): Promise<Row | undefined> {
  const query = db(table).where({ id });
  if (condition.versions) query.whereIn('version', [...condition.versions]);
  const changed = await query.update({ ...values, version: db.raw('?? + 1', ['version']) });
  return changed ? findRecord(db, table, id) : undefined;
}

export async function deleteRecord(db: Queryable, table: string, id: number, condition: VersionCondition = {}): Promise<boolean> {
  const query = db(table).where({ id });
  if (condition.versions) query.whereIn('version', [...condition.versions]);
  return (await query.delete()) > 0;
}

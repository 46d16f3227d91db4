import type { Knex } from 'knex';
import { type Db, isMysql } from './connection';
import type { Filter } from './filters';
import { applyOrder, type OrderKey } from './order';

// What a list asks of the database and what it gets back, and the page readers that the plain
// list (records.ts) and the search module share.

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

export type ListResult = { count: number; rows: Row[] } | { count: number; pastEnd: true };

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

/** From this offset on, a page is read as ids first (see pageRows). */
export const DEFERRED_JOIN_OFFSET = 100;

/**
 * A page of `query` in `order`. `idsFirst`: ids first, then rows by primary key, so rows passed
 * over or sorted are read for their keys only (deep pages: skipping whole rows made MySQL scan
 * and sort the table).
 */
export async function pageRows(
  db: Db,
  table: string,
  query: Knex.QueryBuilder,
  order: readonly OrderKey[],
  page: { limit: number; offset: number },
  idsFirst: boolean,
): Promise<Row[]> {
  const mysql = isMysql(db);
  applyOrder(query, order, mysql);
  query.limit(page.limit).offset(page.offset);
  if (!idsFirst) return (await query.select('*')) as Row[];
  if (mysql) return rowsOf(db, table, (await query.pluck('id')) as (number | string)[]);
  // One statement: SQLite takes a LIMIT in an IN subquery (MySQL does not).
  const rows = db(table).select('*').whereIn('id', query.select('id'));
  applyOrder(rows, order, false);
  return (await rows) as Row[];
}

/** The rows of these ids, in their order. */
export async function rowsOf(db: Db, table: string, ids: readonly (number | string)[]): Promise<Row[]> {
  const rows = ids.length ? ((await db(table).whereIn('id', [...ids])) as Row[]) : [];
  const position = new Map(ids.map((id, i) => [Number(id), i]));
  return rows.sort((a, b) => position.get(Number(a.id))! - position.get(Number(b.id))!);
}

export async function countRows(query: Knex.QueryBuilder): Promise<number> {
  const [{ n }] = await query.count<{ n: number | string }[]>({ n: '*' });
  return Number(n);
}

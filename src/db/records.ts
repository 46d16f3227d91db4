import type { Knex } from 'knex';
import type { Db } from './connection';
import { applyFilters, type Filter } from './filters';
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

export type ListResult = { count: number; rows: Row[] } | { count: number; pastEnd: true };

/** The list pipeline's database steps: filter, order, paginate (serializing is the caller's). */
export async function listRecords(db: Db, spec: TableSpec, request: ListRequest): Promise<ListResult> {
  const filtered = db(spec.table);
  if (request.terms.length) applySearch(filtered, spec.searchFields, request.terms, await foldCollation(db));
  applyFilters(filtered, request.filters);

  const [{ n }] = await filtered.clone().count({ n: '*' });
  const count = Number(n);
  const offset = (request.page - 1) * request.pageSize;
  if (request.page > 1 && offset >= count) return { count, pastEnd: true };

  applyOrder(filtered, request.order);
  const rows = await filtered.select('*').limit(request.pageSize).offset(offset);
  return { count, rows };
}

export async function findRecord(db: Queryable, table: string, id: number): Promise<Row | undefined> {
  return db(table).where({ id }).first();
}

export async function insertRecord(db: Queryable, table: string, values: Values): Promise<Row> {
  const [id] = await db(table).insert(values);
  const row = await findRecord(db, table, Number(id));
  if (!row) throw new Error(`inserted ${table} row ${id} was not found`);
  return row;
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

import type { Knex } from 'knex';
import { isMysql } from './connection';

/** Stands for a value bound at each run in a statement that knex compiles once (see `compiledRows`). */
export const PARAM = '\u0000param\u0000';

const compiled = new Map<string, Knex.Sql>();
/**
 * Keys can come from requests (a cursor page's order and page size), so the cache is bounded:
 * past this many statements, new ones are compiled for each call as before, never kept.
 */
const MAX_COMPILED = 1000;

/** How many statements are kept compiled (for tests). */
export const compiledCount = (): number => compiled.size;

/**
 * Rows of a statement whose SQL depends only on `key` (and the dialect): built and compiled once
 * (`build`, PARAM where a value goes), then run through knex.raw with `values` bound in order,
 * since building a query per request was most of knex's cost on a get by id.
 */
export async function compiledRows<T>(
  db: Knex | Knex.Transaction,
  key: string,
  build: (db: Knex | Knex.Transaction) => Knex.QueryBuilder,
  values: readonly unknown[] = [],
): Promise<T[]> {
  const mysql = isMysql(db);
  const id = `${mysql ? 'mysql' : 'sqlite'}\u0000${key}`;
  let sql = compiled.get(id);
  if (!sql) {
    sql = build(db).toSQL();
    if (compiled.size < MAX_COMPILED) compiled.set(id, sql);
  }
  let next = 0;
  const bindings = sql.bindings.map((b) => (b === PARAM ? values[next++] : b)) as Knex.RawBinding[];
  if (next !== values.length) throw new Error(`statement ${key} binds ${next} values, not ${values.length}`);
  const result: unknown = await db.raw(sql.sql, bindings);
  // mysql2 answers [rows, fields]; better-sqlite3 the rows.
  return (mysql ? (result as [T[]])[0] : result) as T[];
}

import type { Knex } from 'knex';

/**
 * The index of the default order (created_at, id: newest first, id as tie-breaker) that every
 * record table has; search names it to walk it (src/search/plan.ts).
 */
export function orderIndexName(table: string): string {
  return `${table}_created_at_id_index`;
}

/** A sort key. `rank` sorts an enumerated column by its position in that list, not by its text. */
export interface OrderKey {
  column: string;
  desc: boolean;
  rank?: readonly string[];
  /** The column may hold NULL (sorted as the smallest value). */
  nullable?: boolean;
  /** Text: sorted by code point (`exact`) or by code point ignoring case (`fold`, emails). */
  text?: 'exact' | 'fold';
}

/** A key's SQL, for ORDER BY and for comparing it with a bound value (`value`). */
export interface KeySql {
  sql: string;
  bindings: Knex.Value[];
  value: string;
}

/**
 * SQLite sorts text by code point (emails by its NOCASE collation); MySQL's collations pad with
 * spaces ('a' = 'a ') and, for emails, sort punctuation by other rules. On MySQL, text is
 * therefore compared as bytes (UTF-8 bytes sort as code points), emails after LOWER().
 */
export function keySql(key: OrderKey, mysql: boolean): KeySql {
  if (key.rank) {
    return {
      sql: `CASE ?? ${key.rank.map(() => 'WHEN ? THEN ?').join(' ')} END`,
      bindings: [key.column, ...key.rank.flatMap((v, i) => [v, i])],
      value: '?',
    };
  }
  if (mysql && key.text === 'exact') return { sql: 'CAST(?? AS BINARY)', bindings: [key.column], value: 'CAST(? AS BINARY)' };
  if (mysql && key.text === 'fold') return { sql: 'CAST(LOWER(??) AS BINARY)', bindings: [key.column], value: 'CAST(LOWER(?) AS BINARY)' };
  return { sql: '??', bindings: [key.column], value: '?' };
}

/** Newest first, the contract's default. */
export const DEFAULT_ORDER: readonly OrderKey[] = [
  { column: 'created_at', desc: true },
  { column: 'id', desc: true },
];

/** Orders by the keys; the caller ends them with a unique key (id) so that the order is total. */
export function applyOrder(query: Knex.QueryBuilder, keys: readonly OrderKey[], mysql: boolean): void {
  for (const key of keys) {
    const e = keySql(key, mysql);
    if (e.sql === '??') query.orderBy(key.column, key.desc ? 'desc' : 'asc');
    else query.orderByRaw(`${e.sql} ${key.desc ? 'DESC' : 'ASC'}`, e.bindings);
  }
}

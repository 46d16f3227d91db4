import type { Knex } from 'knex';

/** One condition of a list, as the collection declares it and the request fills it in. */
export type Filter =
  | { column: string; op: 'eq' | 'gte' | 'lte'; value: string | number }
  | { column: string; op: 'in'; value: readonly string[] }
  | { column: string; op: 'positive' | 'zero' };

/** ANDs the filters onto the query; identifiers and values are always bound. */
export function applyFilters(query: Knex.QueryBuilder, filters: readonly Filter[]): void {
  for (const f of filters) {
    // MySQL's PAD SPACE collations find 'ann ' equal to 'ann'; equal lengths make it exact.
    // (Text only: SQLite binds a JS number as REAL, whose LENGTH is that of '3.0', never of 3.)
    if (f.op === 'eq' && typeof f.value === 'string')
      query.where(f.column, f.value).whereRaw('LENGTH(??) = LENGTH(?)', [f.column, f.value]);
    else if (f.op === 'eq') query.where(f.column, f.value);
    else if (f.op === 'gte') query.where(f.column, '>=', f.value);
    else if (f.op === 'lte') query.where(f.column, '<=', f.value);
    else if (f.op === 'in') query.whereIn(f.column, f.value);
    else if (f.op === 'positive') query.where(f.column, '>', 0);
    else query.where(f.column, 0);
  }
}

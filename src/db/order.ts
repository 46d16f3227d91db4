import type { Knex } from 'knex';

/** A sort key. `rank` sorts an enumerated column by its position in that list, not by its text. */
export interface OrderKey {
  column: string;
  desc: boolean;
  rank?: readonly string[];
  /** The column may hold NULL (sorted as the smallest value). */
  nullable?: boolean;
}

/** Newest first, the contract's default. */
export const DEFAULT_ORDER: readonly OrderKey[] = [
  { column: 'created_at', desc: true },
  { column: 'id', desc: true },
];

/** Orders by the keys; the caller ends them with a unique key (id) so that the order is total. */
export function applyOrder(query: Knex.QueryBuilder, keys: readonly OrderKey[]): void {
  for (const key of keys) {
    const direction = key.desc ? 'DESC' : 'ASC';
    if (key.rank) {
      const cases = key.rank.map(() => 'WHEN ? THEN ?').join(' ');
      query.orderByRaw(`CASE ?? ${cases} END ${direction}`, [key.column, ...key.rank.flatMap((v, i) => [v, i])]);
    } else {
      query.orderBy(key.column, direction.toLowerCase() as 'asc' | 'desc');
    }
  }
}

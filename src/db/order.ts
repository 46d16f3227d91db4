import type { Knex } from 'knex';

/** A sort key. `rank` sorts an enumerated column by its position in that list, not by its text. */
export interface OrderKey {
  column: string;
  desc: boolean;
  rank?: readonly string[];
}

/** Newest first, the contract's default. */
export const DEFAULT_ORDER: readonly OrderKey[] = [
  { column: 'created_at', desc: true },
  { column: 'id', desc: true },
];

/** Orders by the keys, then by id (in the last key's direction) so that every order is total. */
export function applyOrder(query: Knex.QueryBuilder, keys: readonly OrderKey[]): void {
  const all = keys.some((k) => k.column === 'id') ? keys : [...keys, { column: 'id', desc: keys.at(-1)?.desc ?? true }];
  for (const key of all) {
    const direction = key.desc ? 'DESC' : 'ASC';
    if (key.rank) {
      const cases = key.rank.map(() => 'WHEN ? THEN ?').join(' ');
      query.orderByRaw(`CASE ?? ${cases} END ${direction}`, [key.column, ...key.rank.flatMap((v, i) => [v, i])]);
    } else {
      query.orderBy(key.column, direction.toLowerCase() as 'asc' | 'desc');
    }
  }
}

import type { Knex } from 'knex';
import { keySql, type OrderKey } from './order';

/**
 * Keyset ("seek") conditions: the rows strictly after a boundary row in an order, so that any
 * page costs the same however deep it is. NULL sorts as the smallest value, as both MySQL and
 * SQLite sort it (first ascending, last descending).
 */

function keyValue(key: OrderKey, value: Knex.Value): Knex.Value {
  return key.rank && value !== null ? key.rank.indexOf(value as string) : value;
}

function equal(q: Knex.QueryBuilder, key: OrderKey, value: Knex.Value, mysql: boolean): void {
  const e = keySql(key, mysql);
  const v = keyValue(key, value);
  if (v === null) q.whereRaw(`${e.sql} IS NULL`, e.bindings);
  else q.whereRaw(`${e.sql} = ${e.value}`, [...e.bindings, v]);
}

function after(q: Knex.QueryBuilder, key: OrderKey, value: Knex.Value, mysql: boolean): void {
  const e = keySql(key, mysql);
  const v = keyValue(key, value);
  if (!key.desc) {
    if (v === null) q.whereRaw(`${e.sql} IS NOT NULL`, e.bindings);
    else q.whereRaw(`${e.sql} > ${e.value}`, [...e.bindings, v]);
  } else if (v === null) {
    q.whereRaw('1 = 0');
  } else if (key.nullable) {
    q.whereRaw(`(${e.sql} < ${e.value} OR ${e.sql} IS NULL)`, [...e.bindings, v, ...e.bindings]);
  } else {
    q.whereRaw(`${e.sql} < ${e.value}`, [...e.bindings, v]);
  }
}

/** Keys with their direction flipped: for walking backwards. */
export function reversed(keys: readonly OrderKey[]): OrderKey[] {
  return keys.map((k) => ({ ...k, desc: !k.desc }));
}

/**
 * Restricts the query to rows after `values` (one per key, the last key unique) in the keys'
 * order: (k1 > v1) OR (k1 = v1 AND k2 > v2) OR ... Spelled out rather than as a row comparison
 * ((k1, k2) > (v1, v2)), which MariaDB reads as a full index scan rather than a range.
 */
export function applyAfter(query: Knex.QueryBuilder, keys: readonly OrderKey[], values: readonly Knex.Value[], mysql: boolean): void {
  query.where((outer) => {
    keys.forEach((key, i) => {
      outer.orWhere((inner) => {
        for (let j = 0; j < i; j++) equal(inner, keys[j], values[j], mysql);
        after(inner, key, values[i], mysql);
      });
    });
  });
}

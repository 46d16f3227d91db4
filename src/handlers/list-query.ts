import type { OpenAPIV3 } from 'openapi-types';
import type { Collection } from '../collections';
import type { Filter } from '../db/filters';
import { DEFAULT_ORDER, type OrderKey } from '../db/order';
import { parseSearch } from '../search';
import type { FieldError } from '../problems';
import { clientProperties } from '../spec';

/** The list query as validated against the spec (openapi-backend has parsed and coerced it). */
export type ListQuery = Record<string, string | number | boolean | string[] | undefined>;

/** What sorting needs to know of the fields, read from the spec's write schema. */
export interface SortInfo {
  /** Enum order of ranked fields: the rank that `ordering` sorts by. */
  rank: Record<string, readonly string[]>;
  /** Fields that may be null. */
  nullable: ReadonlySet<string>;
  /** Text fields and how they sort: by code point, or ignoring case (emails). */
  text: Readonly<Record<string, 'exact' | 'fold'>>;
}

export function sortInfo(spec: OpenAPIV3.Document, c: Collection): SortInfo {
  const props = clientProperties(spec, c.resource);
  return {
    rank: Object.fromEntries((c.rankedFields ?? []).map((f) => [f, (props[f].enum ?? []) as string[]])),
    nullable: new Set(Object.keys(props).filter((f) => props[f].nullable)),
    text: Object.fromEntries(
      Object.keys(props)
        .filter(
          (f) =>
            props[f].type === 'string' &&
            !props[f].format?.startsWith('date') &&
            !props[f].enum &&
            !(c.decimalFields as readonly string[]).includes(f),
        )
        .map((f) => [f, props[f].format === 'email' ? 'fold' : 'exact']),
    ),
  };
}

export function searchTerms(query: ListQuery): string[] {
  return parseSearch(typeof query.search === 'string' ? query.search : '');
}

/**
 * `?ordering=-price,name` as sort keys (the spec has checked every field name), completed with
 * `id` in the last key's direction so that the order is total and pages are stable.
 */
export function orderKeys(query: ListQuery, info: SortInfo): OrderKey[] {
  const ordering = query.ordering as string[] | undefined;
  if (!ordering?.length) return [...DEFAULT_ORDER];
  const keys: OrderKey[] = [];
  for (const key of ordering) {
    const column = key.replace(/^-/, '');
    if (keys.some((k) => k.column === column)) continue;
    keys.push({ column, desc: key.startsWith('-'), rank: info.rank[column], nullable: info.nullable.has(column), text: info.text[column] });
    if (column === 'id') return keys;
  }
  return [...keys, { column: 'id', desc: keys[keys.length - 1].desc }];
}

/**
 * The collection's filters that the request sets, and the 400 entries for the list query's own
 * rules that the spec cannot state: a range given upside down, a cursor with a page.
 */
export function filters(c: Collection, query: ListQuery): { filters: Filter[]; errors: FieldError[] } {
  const out: Filter[] = [];
  for (const [param, spec] of Object.entries(c.filters ?? {})) {
    const value = query[param];
    if (value === undefined) continue;
    if (spec.op === 'stock') out.push({ column: spec.column, op: value === true ? 'positive' : 'zero' });
    else if (spec.op === 'in') out.push({ column: spec.column, op: 'in', value: value as string[] });
    else out.push({ column: spec.column, op: spec.op, value: value as string });
  }
  const errors: FieldError[] = [];
  for (const [low, high] of c.ranges ?? []) {
    const a = query[low];
    const b = query[high];
    if (a === undefined || b === undefined) continue;
    // Prices are decimal strings and dates are YYYY-MM-DD: numbers compare as numbers, dates as text.
    const inverted = /^[0-9.]+$/.test(String(a)) ? Number(a) > Number(b) : String(a) > String(b);
    if (inverted) errors.push({ field: low, message: `must not be above ${high} (${String(b)})` });
  }
  if (query.cursor !== undefined && query.page !== undefined) errors.push({ field: 'cursor', message: 'cannot be combined with page' });
  return { filters: out, errors };
}

import type { OpenAPIV3 } from 'openapi-types';
import type { Collection } from '../collections';
import type { Filter } from '../db/filters';
import { DEFAULT_ORDER, type OrderKey } from '../db/order';
import { parseSearch } from '../db/search';
import type { FieldError } from '../http/problem';

/** The list query as validated against the spec (openapi-backend has parsed and coerced it). */
export type ListQuery = Record<string, string | number | boolean | string[] | undefined>;

/** Enum order of ranked fields, from the spec's write schema: the rank that `ordering` sorts by. */
export function ranks(spec: OpenAPIV3.Document, c: Collection): Record<string, readonly string[]> {
  const props = (spec.components?.schemas?.[`${c.resource}Write`] as OpenAPIV3.SchemaObject).properties ?? {};
  return Object.fromEntries(
    (c.rankedFields ?? []).map((f) => [f, ((props[f] as OpenAPIV3.SchemaObject).enum ?? []) as string[]]),
  );
}

export function searchTerms(query: ListQuery): string[] {
  return parseSearch(typeof query.search === 'string' ? query.search : '');
}

/** `?ordering=-price,name` as sort keys; the spec has already checked every field name. */
export function orderKeys(query: ListQuery, rank: Record<string, readonly string[]>): readonly OrderKey[] {
  const ordering = query.ordering as string[] | undefined;
  if (!ordering?.length) return DEFAULT_ORDER;
  return ordering.map((key) => {
    const column = key.replace(/^-/, '');
    return { column, desc: key.startsWith('-'), rank: rank[column] };
  });
}

/** The collection's filters that the request sets, or the 400 entries for ranges given upside down. */
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
    if (inverted) errors.push({ field: low, message: `must not be above ${high} (${b})` });
  }
  return { filters: out, errors };
}

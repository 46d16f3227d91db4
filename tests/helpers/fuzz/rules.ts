import { collections } from '../../../src/collections';
import type { CollectionRules, FilterRule, SortKind } from './model';
import { writable } from './plans';
import { type Operation, specOperations } from './spec';

/**
 * What the spec says in words (its guide and its parameters' descriptions) and no schema states,
 * as the collection declarations put it: ranked and decimal fields, filters and ranges. Every
 * filter parameter of a list must be among them, so a filter added to the spec alone fails here.
 */
const SPEC_WORDS = {
  ranked: Object.fromEntries(collections.map((c) => [c.name, [...(c.rankedFields ?? [])]])) as Record<string, string[]>,
  decimal: Object.fromEntries(collections.map((c) => [c.name, [...c.decimalFields]])) as Record<string, string[]>,
  filters: Object.fromEntries(
    collections.map((c) => [
      c.name,
      Object.fromEntries(Object.entries(c.filters ?? {}).map(([param, f]) => [param, { field: f.column, op: f.op }])),
    ]),
  ) as Record<string, Record<string, FilterRule>>,
  ranges: Object.fromEntries(collections.map((c) => [c.name, (c.ranges ?? []).map(([a, b]) => [a, b])])) as Record<
    string,
    [string, string][]
  >,
};
/** List parameters that are not filters. */
export const PAGING = ['page', 'page_size', 'cursor', 'search', 'ordering'];

function rulesOf(operations: Operation[], name: string, uniqueFields: readonly string[], searchFields: readonly string[]): CollectionRules {
  const write = operations.find((op) => op.collection === name && op.method === 'POST')!.body!;
  const fields = Object.fromEntries(writable(write));
  const list = operations.find(
    (op) => op.collection === name && op.method === 'GET' && !op.path.includes('{') && !op.path.endsWith('/export/'),
  )!;
  const ordering = list.params.find((p) => p.name === 'ordering')!.schema as { items: { enum: string[] } };
  const ranked = SPEC_WORDS.ranked[name] ?? [];
  const kind = (field: string): SortKind => {
    const s = fields[field];
    if (field === 'id') return 'number';
    if (!s) return 'text'; // created_at, updated_at: RFC 3339 UTC with milliseconds sort as text
    if (ranked.includes(field)) return 'rank';
    if ((SPEC_WORDS.decimal[name] ?? []).includes(field)) return 'decimal';
    if (s.type === 'integer') return 'number';
    if (s.format === 'date') return 'date';
    // Unique ignoring case, and sorted so: the order of ASCII letters ignoring case.
    if (s.format === 'email') return 'folded';
    return 'text';
  };
  const sortable = [...new Set(ordering.items.enum.map((e) => e.replace(/^-/, '')))];
  const filters = SPEC_WORDS.filters[name] ?? {};
  for (const p of list.params.filter((p) => p.in === 'query' && !PAGING.includes(p.name))) {
    if (!filters[p.name])
      throw new Error(`the ${name} filter ${p.name} is in the spec but not in its declaration's filters (src/collections.ts)`);
  }
  return {
    fields,
    uniqueFields,
    searchFields,
    sortKinds: Object.fromEntries([...sortable, ...Object.values(filters).map((f) => f.field)].map((f) => [f, kind(f)])),
    sortable,
    ranks: Object.fromEntries(ranked.map((f) => [f, fields[f].enum as string[]])),
    filters,
    ranges: SPEC_WORDS.ranges[name] ?? [],
  };
}

/** The list model's rules for every declared collection, from the spec and the declarations. */
export function collectionRules(operations: Operation[] = specOperations()): Record<string, CollectionRules> {
  return Object.fromEntries(collections.map((c) => [c.name, rulesOf(operations, c.name, c.uniqueFields, c.searchFields)]));
}

import { toNfc } from '../../../src/lib/text';
import type { Schema } from './spec';

/**
 * What the fuzzer believes the database holds, record by record, as the service last answered
 * it, with each record's version (its ETag), the idempotency keys whose creates succeeded, and
 * the cursors the service has handed out. Only the fuzzer writes to its database, so every
 * expected status (201 or 409, 200, 304, 404 or 412) and every expected page follows from this
 * and the request.
 */
export type Rec = Record<string, unknown> & { id: number; created_at: string; updated_at: string };

/** What one field of a record holds: no resource has an object or array field. */
export type FieldValue = string | number | boolean | null;

/** How `ordering` compares a field's values (the spec's words; no schema says it). */
export type SortKind = 'number' | 'decimal' | 'text' | 'folded' | 'date' | 'rank';

/** `eq`: exactly equal; `gte`/`lte`: inclusive bound (a null never passes); `in`: one of; `stock`: true above 0, false at 0. */
export interface FilterRule {
  field: string;
  op: 'eq' | 'gte' | 'lte' | 'in' | 'stock';
}

export interface CollectionRules {
  /** The write schema's client fields (those set by the service left out), with their defaults. */
  fields: Record<string, Schema>;
  uniqueFields: readonly string[];
  searchFields: readonly string[];
  /** How each field that `ordering` may name, or a filter compares, sorts. */
  sortKinds: Record<string, SortKind>;
  /** The fields `ordering` may name (id and the timestamps among them), in the spec's order. */
  sortable: readonly string[];
  /** Enum order of ranked fields. */
  ranks: Record<string, readonly string[]>;
  /** List filters by query parameter. */
  filters: Record<string, FilterRule>;
  /** [lower, upper] pairs of filters: a lower bound above its upper one is a 400 naming the lower. */
  ranges: readonly (readonly [string, string])[];
}

const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;

/** Equal, or the same decimal written differently (`"5"` is answered `"5.00"`). */
export function sameValue(sent: unknown, answered: unknown): boolean {
  if (Object.is(sent, answered)) return true;
  return (
    typeof sent === 'string' &&
    typeof answered === 'string' &&
    DECIMAL.test(sent) &&
    DECIMAL.test(answered) &&
    Number(sent) === Number(answered)
  );
}

/** Code point order (UTF-8 byte order), not JavaScript's UTF-16 code unit order. */
export function compareCodePoints(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(j)!;
    if (x !== y) return x < y ? -1 : 1;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return i < a.length ? 1 : j < b.length ? -1 : 0;
}

export interface SortKey {
  field: string;
  desc: boolean;
}

/** The request's list query as the model reads it. */
export interface ListQuery {
  ordering?: string[];
  /** Filter parameters as sent (decoded; arrays split, booleans as booleans). */
  filters: Record<string, unknown>;
  terms: string[];
}

/** Three-valued: the model cannot always tell how two databases fold case outside ASCII. */
type Verdict = 'yes' | 'no' | 'maybe';

export interface Prediction {
  /** The records that match or may match, in order (one order per reading of `ordering`). */
  orders: Rec[][];
  /** Records that certainly match; the rest of `orders` may or may not. */
  sure: Set<number>;
  /** True when every record's match is certain: counts and pages are exact. */
  exact: boolean;
  /** Comparators, one per order. */
  comparators: ((a: Record<string, unknown>, b: Record<string, unknown>) => number)[];
}

/** A stored response of a create with an Idempotency-Key. */
export interface Remembered {
  canon: string;
  body: unknown;
  answer: { body: unknown; location: string | null; etag: string | null };
}

/** A cursor the service handed out: its query, direction, and the record it starts from. */
export interface IssuedCursor {
  collection: string;
  token: string;
  direction: 'n' | 'p';
  /** The query parameters it is bound to, encoded as sent (`ordering`, `search`, filters), and `page_size`. */
  bound: string[];
  query: ListQuery;
  /** The boundary record's values when the cursor was issued. */
  boundary: Record<string, unknown>;
}

const MAX_CURSORS = 60;

export class Model {
  private readonly records = new Map<string, Map<number, Rec>>();
  private readonly versions = new Map<string, Map<number, number>>();
  private readonly keys = new Map<string, Map<string, Remembered>>();
  private readonly failedKeys = new Set<string>();
  readonly cursors: IssuedCursor[] = [];

  constructor(readonly rules: Record<string, CollectionRules>) {
    for (const name of Object.keys(rules)) {
      this.records.set(name, new Map());
      this.versions.set(name, new Map());
      this.keys.set(name, new Map());
    }
  }

  all(collection: string): Rec[] {
    return [...this.records.get(collection)!.values()];
  }

  /** Newest first, ties by id descending: the contract's default order. */
  listed(collection: string): Rec[] {
    return this.predict(collection, { filters: {}, terms: [] }).orders[0];
  }

  /** The n-th known record (modulo their number), or undefined when there is none. */
  pick(collection: string, n: number): Rec | undefined {
    const all = this.all(collection);
    return all.length ? all[n % all.length] : undefined;
  }

  get(collection: string, id: number): Rec | undefined {
    return this.records.get(collection)!.get(id);
  }

  version(collection: string, id: number): number | undefined {
    return this.versions.get(collection)!.get(id);
  }

  set(collection: string, record: Rec, version: number): void {
    this.records.get(collection)!.set(record.id, record);
    this.versions.get(collection)!.set(record.id, version);
  }

  remove(collection: string, id: number): void {
    this.records.get(collection)!.delete(id);
    this.versions.get(collection)!.delete(id);
  }

  /** What a full read of the database found; versions are kept for the records still there. */
  replaceAll(collection: string, records: Rec[]): void {
    const versions = this.versions.get(collection)!;
    this.records.set(collection, new Map(records.map((r) => [r.id, r])));
    this.versions.set(collection, new Map(records.filter((r) => versions.has(r.id)).map((r) => [r.id, versions.get(r.id)!])));
  }

  /** The client fields that a body sets; with `defaults`, the rest at their defaults (create, PUT). */
  written(collection: string, body: Record<string, unknown>, defaults: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, schema] of Object.entries(this.rules[collection].fields)) {
      // Text is stored in NFC (src/lib/text.ts).
      if (body[name] !== undefined) out[name] = toNfc(body[name]);
      else if (defaults) out[name] = schema.default ?? null;
    }
    return out;
  }

  /** Unique fields whose value in `values` another record already has. Emails compare ignoring case. */
  conflicts(collection: string, values: Record<string, unknown>, exceptId?: number): string[] {
    const { uniqueFields, fields } = this.rules[collection];
    const key = (field: string, v: unknown) => (fields[field].format === 'email' ? String(v).toLowerCase() : v);
    return uniqueFields.filter(
      (field) =>
        values[field] !== undefined &&
        this.all(collection).some((r) => r.id !== exceptId && key(field, r[field]) === key(field, values[field])),
    );
  }

  // --- Idempotency keys -------------------------------------------------------------------

  remembered(collection: string, key: string): Remembered | undefined {
    return this.keys.get(collection)!.get(key);
  }

  remember(collection: string, key: string, entry: Remembered): void {
    this.keys.get(collection)!.set(key, entry);
  }

  /** A key sent with a create that failed: not remembered, so a retry runs the create again. */
  failed(collection: string, key: string): void {
    if (!this.remembered(collection, key)) this.failedKeys.add(`${collection}\u0000${key}`);
  }

  /**
   * The n-th key used before in a collection (or in any: keys are per collection, another's is
   * new here): remembered ones with their first body, and ones whose create failed.
   */
  pickKey(n: number, only?: string): { collection: string; key: string; entry?: Remembered } | undefined {
    const all: { collection: string; key: string; entry?: Remembered }[] = [...this.keys]
      .filter(([c]) => !only || c === only)
      .flatMap(([collection, m]) => [...m].map(([key, entry]) => ({ collection, key, entry })));
    for (const k of this.failedKeys) {
      const [collection, key] = k.split('\u0000');
      if ((!only || collection === only) && !this.remembered(collection, key)) all.push({ collection, key });
    }
    return all.length ? all[n % all.length] : undefined;
  }

  // --- Cursors ----------------------------------------------------------------------------

  issue(cursor: IssuedCursor): void {
    if (this.cursors.some((c) => c.token === cursor.token)) return;
    this.cursors.push(cursor);
    if (this.cursors.length > MAX_CURSORS) this.cursors.splice(0, this.cursors.length - MAX_CURSORS);
  }

  pickCursor(n: number, where: (c: IssuedCursor) => boolean = () => true): IssuedCursor | undefined {
    const fit = this.cursors.filter(where);
    return fit.length ? fit[n % fit.length] : undefined;
  }

  // --- Lists ------------------------------------------------------------------------------

  /**
   * The sort keys of an ordering, in every reading the spec allows. The spec says ties are
   * broken by id "in the direction of the last key"; when a field is named twice with both
   * directions (`-title,title`, the spec's own example) the last key may be read as the last one
   * written or the last one that still sorts anything (the first mention of a field decides
   * its direction), so both are accepted.
   */
  sortKeys(ordering: string[] | undefined): SortKey[][] {
    if (!ordering?.length)
      return [
        [
          { field: 'created_at', desc: true },
          { field: 'id', desc: true },
        ],
      ];
    const written = ordering.map((k) => ({ field: k.replace(/^-/, ''), desc: k.startsWith('-') }));
    const idAt = written.findIndex((k) => k.field === 'id');
    if (idAt !== -1) return [written.slice(0, idAt + 1)];
    const distinct = written.filter((k, i) => written.findIndex((w) => w.field === k.field) === i);
    const ties = [...new Set([written[written.length - 1].desc, distinct[distinct.length - 1].desc])];
    return ties.map((desc) => [...written, { field: 'id', desc }]);
  }

  comparator(collection: string, keys: SortKey[]): (a: Record<string, unknown>, b: Record<string, unknown>) => number {
    const { sortKinds, ranks } = this.rules[collection];
    const compare = (field: string, x: FieldValue | undefined, y: FieldValue | undefined): number => {
      if (x === y) return 0;
      // NULL sorts as the smallest value: first ascending, last descending.
      if (x === null || x === undefined) return -1;
      if (y === null || y === undefined) return 1;
      switch (field === 'id' ? 'number' : (sortKinds[field] ?? 'text')) {
        case 'number':
        case 'decimal':
          return Math.sign(Number(x) - Number(y));
        case 'rank':
          return Math.sign(ranks[field].indexOf(String(x)) - ranks[field].indexOf(String(y)));
        case 'folded':
          // Emails: unique ignoring case, so two records never tie; a record whose email changed
          // case since a cursor was made on it is at that cursor's boundary, not before or after.
          return compareCodePoints(String(x).toLowerCase(), String(y).toLowerCase());
        default:
          return compareCodePoints(String(x), String(y));
      }
    };
    return (a, b) => {
      for (const k of keys) {
        const c = compare(k.field, a[k.field] as FieldValue | undefined, b[k.field] as FieldValue | undefined);
        if (c !== 0) return k.desc ? -c : c;
      }
      return 0;
    };
  }

  /** Lower bounds that are above their upper bound: the 400's fields. */
  invertedRanges(collection: string, filters: Record<string, unknown>): string[] {
    const { ranges, filters: rules, sortKinds } = this.rules[collection];
    return ranges
      .filter(([low, high]) => filters[low] !== undefined && filters[high] !== undefined)
      .filter(([low, high]) => {
        const kind = sortKinds[rules[low].field];
        const [a, b] = [filters[low], filters[high]];
        return kind === 'decimal' || kind === 'number' ? Number(a) > Number(b) : compareCodePoints(String(a), String(b)) > 0;
      })
      .map(([low]) => low);
  }

  private passes(collection: string, r: Rec, filters: Record<string, unknown>): boolean {
    const { filters: rules, sortKinds } = this.rules[collection];
    return Object.entries(filters).every(([param, value]) => {
      const rule = rules[param];
      if (!rule) return true;
      const v = r[rule.field] as FieldValue | undefined;
      const numeric = sortKinds[rule.field] === 'decimal' || sortKinds[rule.field] === 'number';
      switch (rule.op) {
        case 'eq':
          // Query values arrive as text; a numeric field compares as a number.
          return numeric ? v !== null && Number(v) === Number(value) : v === value;
        case 'in':
          return (value as unknown[]).includes(v);
        case 'stock':
          return value === true ? Number(v) > 0 : Number(v) === 0;
        case 'gte':
          return v !== null && (numeric ? Number(v) >= Number(value) : compareCodePoints(String(v), String(value)) >= 0);
        case 'lte':
          return v !== null && (numeric ? Number(v) <= Number(value) : compareCodePoints(String(v), String(value)) <= 0);
      }
    });
  }

  /**
   * Whether a record matches the search terms. A term in a field is certain when it occurs as
   * written (folding case keeps a substring a substring), or when neither holds a letter with
   * case outside ASCII (folding ASCII case is the same everywhere). How other alphabets fold is
   * the databases' own (Unicode versions differ): then the model says "maybe".
   */
  private searched(collection: string, r: Rec, terms: string[]): Verdict {
    let verdict: Verdict = 'yes';
    for (const term of terms) {
      let best: Verdict = 'no';
      for (const field of this.rules[collection].searchFields) {
        const text = String((r[field] as FieldValue | undefined) ?? '');
        let v: Verdict;
        if (text.includes(term)) v = 'yes';
        else if (!casedBeyondAscii(text) && !casedBeyondAscii(term)) v = text.toLowerCase().includes(term.toLowerCase()) ? 'yes' : 'no';
        else v = 'maybe';
        if (v === 'yes' || (v === 'maybe' && best === 'no')) best = v;
        if (best === 'yes') break;
      }
      if (best === 'no') return 'no';
      if (best === 'maybe') verdict = 'maybe';
    }
    return verdict;
  }

  /** The records a list query may answer, in order, and which of them it must answer. */
  predict(collection: string, sent: ListQuery): Prediction {
    // Terms and filter values are compared in NFC, as text is stored.
    const q = toNfc(sent);
    const sure = new Set<number>();
    let exact = true;
    const candidates = this.all(collection).filter((r) => {
      if (!this.passes(collection, r, q.filters)) return false;
      const v = q.terms.length ? this.searched(collection, r, q.terms) : 'yes';
      if (v === 'yes') sure.add(r.id);
      if (v === 'maybe') exact = false;
      return v !== 'no';
    });
    const comparators = this.sortKeys(q.ordering).map((keys) => this.comparator(collection, keys));
    return { orders: comparators.map((c) => [...candidates].sort(c)), sure, exact, comparators };
  }
}

/** True when the text holds a character outside ASCII that has another case. */
function casedBeyondAscii(s: string): boolean {
  for (const ch of s) {
    if (ch.codePointAt(0)! > 0x7f && (ch.toLowerCase() !== ch || ch.toUpperCase() !== ch)) return true;
  }
  return false;
}

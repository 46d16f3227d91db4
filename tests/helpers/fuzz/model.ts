import type { Schema } from './spec';

/**
 * What the fuzzer believes the database holds, record by record, as the service last answered
 * it. Only the fuzzer writes to its database, so every expected status (201 or 409, 200 or 404)
 * and every expected record follows from this and the request.
 */
export type Rec = Record<string, unknown> & { id: number; created_at: string; updated_at: string };

export interface CollectionRules {
  /** The write schema's client fields (read-only ones left out), with their defaults. */
  fields: Record<string, Schema>;
  uniqueFields: readonly string[];
  searchFields: readonly string[];
}

const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;

/** Equal, or the same decimal written differently (`"5"` is answered `"5.00"`). */
export function sameValue(sent: unknown, answered: unknown): boolean {
  if (Object.is(sent, answered)) return true;
  return typeof sent === 'string' && typeof answered === 'string' && DECIMAL.test(sent) && DECIMAL.test(answered) && Number(sent) === Number(answered);
}

export class Model {
  private readonly records = new Map<string, Map<number, Rec>>();

  constructor(readonly rules: Record<string, CollectionRules>) {
    for (const name of Object.keys(rules)) this.records.set(name, new Map());
  }

  all(collection: string): Rec[] {
    return [...this.records.get(collection)!.values()];
  }

  /** Newest first, ties by id descending: the contract's list order. */
  listed(collection: string): Rec[] {
    return this.all(collection).sort((a, b) => (a.created_at === b.created_at ? b.id - a.id : a.created_at < b.created_at ? 1 : -1));
  }

  /** The n-th known record (modulo their number), or undefined when there is none. */
  pick(collection: string, n: number): Rec | undefined {
    const all = this.all(collection);
    return all.length ? all[n % all.length] : undefined;
  }

  get(collection: string, id: number): Rec | undefined {
    return this.records.get(collection)!.get(id);
  }

  set(collection: string, record: Rec): void {
    this.records.get(collection)!.set(record.id, record);
  }

  remove(collection: string, id: number): void {
    this.records.get(collection)!.delete(id);
  }

  replaceAll(collection: string, records: Rec[]): void {
    this.records.set(collection, new Map(records.map((r) => [r.id, r])));
  }

  /** The client fields that a body sets; with `defaults`, the rest at their defaults (create, PUT). */
  written(collection: string, body: Record<string, unknown>, defaults: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, schema] of Object.entries(this.rules[collection].fields)) {
      if (body[name] !== undefined) out[name] = body[name];
      else if (defaults) out[name] = schema.default ?? null;
    }
    return out;
  }

  /** Unique fields whose value in `values` another record already has. Emails compare ignoring case. */
  conflicts(collection: string, values: Record<string, unknown>, exceptId?: number): string[] {
    const { uniqueFields, fields } = this.rules[collection];
    const key = (field: string, v: unknown) => (fields[field].format === 'email' ? String(v).toLowerCase() : v);
    return uniqueFields.filter(
      (field) => values[field] !== undefined && this.all(collection).some((r) => r.id !== exceptId && key(field, r[field]) === key(field, values[field])),
    );
  }
}

import type { OpenAPIV3 } from 'openapi-types';
import type { Collection, RecordOf, ResourceName } from '../collections';
import type { Row, Values } from '../db/records';
import { apiTimestamp } from '../db/time';
import { clientProperties } from '../spec';

/** A client field, its default and whether it is a boolean, read from the spec's write schema (never restated here). */
export interface Field {
  name: string;
  default: unknown;
  boolean: boolean;
}

export function writeFields(spec: OpenAPIV3.Document, resource: ResourceName): Field[] {
  return Object.entries(clientProperties(spec, resource)).map(([name, prop]) => ({
    name,
    default: prop.default as unknown,
    boolean: prop.type === 'boolean',
  }));
}

/** Client fields of a body; with `defaults`, a field left out takes its default (create, PUT). */
export function writeValues(fields: readonly Field[], body: Record<string, unknown>, defaults: boolean): Values {
  const out: Values = {};
  for (const f of fields) {
    if (body[f.name] !== undefined) out[f.name] = body[f.name];
    else if (defaults) out[f.name] = f.default ?? null;
  }
  return out;
}

/** Both databases store a boolean as 0 or 1 (SQLite has no boolean type; MySQL's is TINYINT(1)). */
function boolean(value: unknown): boolean | null {
  return value === null || value === undefined ? null : Boolean(Number(value));
}

/** Exactly two decimals, whether the value is MySQL's DECIMAL string, SQLite's REAL or as sent. */
function decimal(value: unknown): string {
  const text = String(value);
  const [whole, fraction = ''] = text.split('.');
  return /^[0-9]+(\.[0-9]*)?$/.test(text) && fraction.length <= 2 ? `${whole}.${fraction.padEnd(2, '0')}` : Number(value).toFixed(2);
}

/** A row as the contract's record: id, the write fields, then the two timestamps. */
export function recordSerializer(spec: OpenAPIV3.Document, c: Collection): (row: Row) => RecordOf<ResourceName> {
  const fields = writeFields(spec, c.resource);
  const decimals = new Set<string>(c.decimalFields);
  return (row) => {
    const out: Record<string, unknown> = { id: Number(row.id) };
    for (const f of fields) out[f.name] = decimals.has(f.name) ? decimal(row[f.name]) : f.boolean ? boolean(row[f.name]) : row[f.name];
    out.created_at = apiTimestamp(row.created_at);
    out.updated_at = apiTimestamp(row.updated_at);
    return out as RecordOf<ResourceName>;
  };
}

/** Rows as records, one at a time (a walk stays lazy). */
export async function* mapRows<T>(rows: AsyncIterable<Row>, serialize: (row: Row) => T): AsyncGenerator<T> {
  for await (const row of rows) yield serialize(row);
}

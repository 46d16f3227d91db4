// Deterministic, realistic rows for each collection, column for column as the service stores
// them, within the spec's rules: the columns and their bounds come from the spec's write schema
// (src/db/tables.ts), so a collection added to the spec and the declarations is seeded unasked.
// Row i depends only on (seed, i, count), so a load can be split into batches, run in any order,
// and repeated exactly.
import type { OpenAPIV3 } from 'openapi-types';
import { type Collection, collections } from '../../src/collections';
import { type ColumnSpec, recordColumns, writeSchema } from '../../src/db/tables';
import { dbTimestamp } from '../../src/db/time';
import { clientProperties, loadSpec } from '../../src/spec';
import { mix, Rng } from './random';
import { asciiName, EMAIL_DOMAINS, FIRST_NAMES, GENRES, LAST_NAMES, WORDS } from './words';

export type Value = string | number | boolean | null;
export const COLLECTIONS = collections.map((c) => c.name);
export type CollectionName = string;

export interface RowSource {
  table: string;
  /** Column names, in the order of each row's values. */
  columns: readonly string[];
  /** Row i (0-based) of the load; its id is i + 1. */
  row(i: number): Value[];
}

// created_at spreads over fixed past years (not relative to today, so loads are repeatable),
// rising with id as records that were really created over time do.
const START = Date.UTC(2019, 0, 1);
const END = Date.UTC(2025, 10, 1);
const DAY = 86_400_000;

function sqlDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function words(rng: Rng, min: number, max: number): string[] {
  const n = rng.int(min, max);
  const out: string[] = new Array<string>(n);
  for (let k = 0; k < n; k++) out[k] = rng.pickSkewed(WORDS);
  return out;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Words joined and cut at a word boundary to at most `maxChars` code points. */
function phrase(rng: Rng, min: number, max: number, maxChars: number): string {
  let text = capitalize(words(rng, min, max).join(' '));
  while ([...text].length > maxChars) text = text.slice(0, text.lastIndexOf(' '));
  return text;
}

function sentence(rng: Rng): string {
  return `${capitalize(words(rng, 6, 14).join(' '))}${rng.pick(['.', '.', '.', '!', '?'])}`;
}

function paragraphs(rng: Rng, min: number, max: number): string {
  const n = rng.int(min, max);
  const out: string[] = [];
  for (let p = 0; p < n; p++) {
    const s = rng.int(1, 3);
    const text: string[] = [];
    for (let k = 0; k < s; k++) text.push(sentence(rng));
    out.push(text.join(' '));
  }
  return out.join('\n\n');
}

/** A unique ISBN-13 for row i: 978, nine digits that are a bijection of i, a check digit. */
export function isbn13(i: number): string {
  const body = `978${String((i * 7919 + 12_345) % 1_000_000_000).padStart(9, '0')}`;
  let sum = 0;
  for (let k = 0; k < 12; k++) sum += Number(body[k]) * (k % 2 ? 3 : 1);
  return `${body}${(10 - (sum % 10)) % 10}`;
}

/** What a field generator knows of the row it fills. */
interface RowContext {
  rng: Rng;
  i: number;
  created: number;
  /** One person per row, so that names, user name and e-mail agree. */
  person: [string, string];
}

type Generator = (row: RowContext) => Value;

/** How a column is filled: realistic text for the fields people know by name, else by its type. */
function generator(col: ColumnSpec, schema: OpenAPIV3.SchemaObject, required: boolean, c: Collection): Generator {
  const max = col.length ?? Infinity;
  const maybeEmpty = (g: Generator, p: number): Generator => (required ? g : (row) => (row.rng.chance(p) ? '' : g(row)));
  const maybeNull = (g: Generator, p: number): Generator => (col.nullable ? (row) => (row.rng.chance(p) ? null : g(row)) : g);
  const username = (row: RowContext) => `${asciiName(row.person[0])}${['.', '_', ''][row.i % 3]}${asciiName(row.person[1])}${row.i + 1}`;
  switch (col.name) {
    case 'title':
      return (row) => phrase(row.rng, 2, 8, Math.min(max, 120));
    case 'name':
      return (row) => `${phrase(row.rng, 1, 3, max - 5)} ${row.rng.pick(['', 'Pro', 'Mini', 'XL', `M${row.rng.int(1, 999)}`])}`.trim();
    case 'content':
    case 'description':
    case 'body':
      return maybeEmpty((row) => paragraphs(row.rng, 1, 3), 0.15);
    case 'author':
      return (row) => row.person.join(' ').slice(0, max);
    case 'genre':
      return (row) => row.rng.pick(GENRES);
    case 'isbn':
      return (row) => isbn13(row.i);
    // The number ends every user name and follows a letter, so names are unique.
    case 'username':
      return username;
    case 'email':
      return (row) => `${username(row)}@${row.rng.pick(EMAIL_DOMAINS)}`;
    case 'first_name':
      return maybeEmpty((row) => row.person[0], 0.05);
    case 'last_name':
      return maybeEmpty((row) => row.person[1], 0.05);
  }
  if (col.kind === 'decimal') {
    // Prices spread over orders of magnitude, as a catalogue's do.
    return (row) => (Math.exp(row.rng.next() * Math.log(10_000)) - 0.01).toFixed(2);
  }
  if (col.kind === 'integer') {
    const low = schema.minimum ?? 0;
    const high = Math.min(schema.maximum ?? 5000, low + 5000);
    return (row) => (row.rng.chance(0.1) ? low : row.rng.int(low, high));
  }
  if (col.kind === 'boolean') return (row) => row.rng.chance(0.2);
  if (col.kind === 'date') return maybeNull((row) => sqlDate(row.created + row.rng.int(-365, 60) * DAY), 0.2);
  if (schema.enum) return (row) => row.rng.pick(schema.enum as string[]);
  if (schema.format === 'email') return (row) => `${username(row)}@${row.rng.pick(EMAIL_DOMAINS)}`;
  // Unique text with no name known here: words, then the row's number, which no other row has.
  if (col.unique && !schema.pattern && col.kind === 'varchar') {
    return (row) => {
      const n = String(row.i + 1);
      return (max - n.length > 3 ? `${phrase(row.rng, 1, 4, max - n.length - 1)} ${n}` : n.slice(-max)).padEnd(schema.minLength ?? 0, '0');
    };
  }
  if (col.unique || schema.pattern)
    throw new Error(`scripts/seed/data.ts has no generator for ${c.name}.${col.name} (unique or patterned): add one by name`);
  if (col.kind === 'varchar') return maybeEmpty((row) => phrase(row.rng, 1, 8, max).padEnd(schema.minLength ?? 0, '.'), 0.1);
  return maybeEmpty((row) => paragraphs(row.rng, 1, 3), 0.1);
}

export function rowSource(table: string, count: number, seed: number): RowSource {
  const index = collections.findIndex((c) => c.name === table);
  if (index < 0) throw new Error(`no collection ${table}`);
  const c = collections[index];
  const spec = loadSpec();
  const write = writeSchema(spec, c);
  // Resolved: a field with a default is a $ref to a schema that holds it (ADR 0015).
  const props = clientProperties(spec, c.resource);
  const columns = recordColumns(spec, c);
  const fill = columns.map((col) => generator(col, props[col.name], (write.required ?? []).includes(col.name), c));
  const step = (END - START) / Math.max(count, 1);
  // Each collection draws its own numbers, so that row i of posts and of tasks differ.
  const salted = (seed ^ Math.imul(index + 1, 0x27d4eb2f)) >>> 0;
  return {
    table,
    columns: ['id', ...columns.map((col) => col.name), 'created_at', 'updated_at'],
    row(i) {
      const rng = new Rng(mix(salted, i));
      const created = START + Math.floor((i + rng.next()) * step);
      // Most records are never edited; the rest were, some time in the following weeks.
      const updated = rng.chance(0.7) ? created : Math.min(END, created + Math.floor(rng.next() * 90 * DAY));
      const person: [string, string] = [rng.pick(FIRST_NAMES), rng.pick(LAST_NAMES)];
      const context = { rng, i, created, person };
      return [i + 1, ...fill.map((g) => g(context)), dbTimestamp(created), dbTimestamp(updated)];
    },
  };
}

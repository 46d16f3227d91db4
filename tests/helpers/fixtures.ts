import type { OpenAPIV3 } from 'openapi-types';
import { rowSource } from '../../scripts/seed/data';
import { type Collection, collections, operationIds } from '../../src/collections';
import { recordColumns, writeSchema } from '../../src/db/tables';
import { clientProperties, loadSpec } from '../../src/spec';
import { deref } from './fuzz/spec';

/**
 * One valid body per collection, plus what each collection's contract says about search and
 * uniqueness, so that tests can loop over all of them. The lists come from the collection
 * declarations and the spec; bodies are hand-written for the five (readable in failures) and
 * generated from the seed's rows for any collection added since.
 */
export interface Fixture {
  name: string;
  /** A valid create body; `n` makes unique fields (and text) distinct. */
  valid(n: number): Record<string, unknown>;
  /** The defaults of optional fields, as a created record shows them. */
  defaults: Record<string, unknown>;
  /** A valid PATCH body that changes something. */
  patch: Record<string, unknown>;
  searchFields: string[];
  /** A client field that is not searched, and holds text. */
  unsearchedText?: string;
  uniqueFields: string[];
  maxPageSize: number;
  /**
   * `count` distinct create bodies with every client field, from the seed's rows, in ASCII so that
   * case folds alike on both databases and in the list model (tests/helpers/fuzz/model.ts).
   */
  rows(count: number): Record<string, unknown>[];
}

const isbn13 = (n: number) => String(9780000000000 + n);

type HandWritten = Pick<Fixture, 'valid' | 'patch'>;

const HAND_WRITTEN: Record<string, HandWritten> = {
  posts: {
    valid: (n) => ({ title: `Post ${n}`, content: `Content of post ${n}`, author: `author${n}` }),
    patch: { title: 'Patched title' },
  },
  products: {
    valid: (n) => ({ name: `Product ${n}`, price: '19.99' }),
    patch: { price: '5', stock: 3 },
  },
  books: {
    valid: (n) => ({ title: `Book ${n}`, author: `Writer ${n}`, isbn: isbn13(n) }),
    patch: { genre: 'Fantasy', published_date: '1937-09-21' },
  },
  users: {
    valid: (n) => ({ username: `user${n}`, email: `user${n}@example.com` }),
    patch: { first_name: 'Ada', last_name: 'Lovelace' },
  },
  tasks: {
    valid: (n) => ({ title: `Task ${n}` }),
    patch: { status: 'done', priority: 'high', due_date: '2026-12-01' },
  },
};

const spec = loadSpec();

/** The first client field that holds free text and is not searched. */
function unsearchedText(c: Collection): string | undefined {
  // Free text only: an enumerated or patterned field is a varchar too, but cannot hold a marker.
  // Resolved: a field with a default is a $ref to a named schema (ADR 0015).
  const props = clientProperties(spec, c.resource);
  return recordColumns(spec, c).find(
    (f) =>
      (f.kind === 'varchar' || f.kind === 'text') &&
      !f.unique &&
      !f.fold &&
      !props[f.name].enum &&
      !props[f.name].pattern &&
      !(c.searchFields as readonly string[]).includes(f.name),
  )?.name;
}

/** Text with accents taken off and any other character outside ASCII replaced. */
function ascii(value: unknown): unknown {
  return typeof value === 'string'
    ? value
        .normalize('NFD')
        .replace(/[\u0300-\u036f]/g, '')
        .replace(/[^\t\n\r -~]/g, 'x')
    : value;
}

function seedRows(c: Collection): (count: number) => Record<string, unknown>[] {
  const fields = recordColumns(spec, c).map((f) => f.name);
  return (count) => {
    const source = rowSource(c.name, count, 11);
    return Array.from({ length: count }, (_, i) => {
      const row = source.row(i);
      return Object.fromEntries(fields.map((f) => [f, ascii(row[source.columns.indexOf(f)])]));
    });
  };
}

/** A collection added after the five: bodies from the seed's generated rows. */
export function generated(c: Collection): HandWritten {
  const source = rowSource(c.name, 1_000_000, 7);
  const fields = recordColumns(spec, c);
  const props = clientProperties(spec, c.resource);
  const value = (n: number, field: string) => source.row(n)[source.columns.indexOf(field)];
  const required = new Set(writeSchema(spec, c).required ?? []);
  // As the hand-written ones are: a create body with the required fields only, and a PATCH that
  // moves every optional field off its default (the validation tests rely on both).
  const optional = fields.filter((f) => !required.has(f.name));
  const offDefault = optional.flatMap((f) => {
    const byDefault = props[f.name].default ?? null;
    for (let n = 1; n <= 100; n++) {
      const v = value(n, f.name);
      if (v !== null && v !== byDefault) return [[f.name, v] as const];
    }
    return [];
  });
  return {
    valid: (n) => Object.fromEntries(fields.filter((f) => required.has(f.name)).map((f) => [f.name, value(n, f.name)])),
    patch: { ...Object.fromEntries(offDefault), [c.searchFields[0]]: 'Patched' },
  };
}

function maxPageSize(c: Collection): number {
  const list = Object.values(spec.paths[`/api/${c.name}/`] ?? {}).find(
    (op) => (op as OpenAPIV3.OperationObject).operationId === operationIds(c).list,
  );
  const params = deref((list as OpenAPIV3.OperationObject).parameters ?? [], spec) as OpenAPIV3.ParameterObject[];
  return (params.find((p) => p.name === 'page_size')!.schema as OpenAPIV3.SchemaObject).maximum!;
}

/** Optional fields' defaults, as a created record shows them. */
function defaults(c: Collection): Record<string, unknown> {
  const write = writeSchema(spec, c);
  const props = clientProperties(spec, c.resource);
  return Object.fromEntries(
    recordColumns(spec, c)
      .filter((f) => !(write.required ?? []).includes(f.name))
      .map((f) => [f.name, props[f.name].default ?? null]),
  );
}

export const fixtures: Fixture[] = collections.map((c) => ({
  name: c.name,
  ...(HAND_WRITTEN[c.name] ?? generated(c)),
  unsearchedText: unsearchedText(c),
  defaults: defaults(c),
  searchFields: [...c.searchFields],
  uniqueFields: [...c.uniqueFields],
  maxPageSize: maxPageSize(c),
  rows: seedRows(c),
}));

/** The fixtures by collection name. */
export const byName = Object.fromEntries(fixtures.map((f) => [f.name, f])) as Record<string, Fixture>;

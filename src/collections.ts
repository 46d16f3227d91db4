import type { components, operations } from './generated/openapi';

type Schemas = components['schemas'];
/** Every schema `R` of the spec that has an `RWrite` beside it: the resources (from the generated types). */
type SchemaName = Extract<keyof Schemas, string>;
export type ResourceName = { [K in SchemaName]: `${K}Write` extends SchemaName ? K : never }[SchemaName];
export type RecordOf<R extends ResourceName> = Schemas[R];
export type WriteOf<R extends ResourceName> = Schemas[`${R}Write`];
export type PatchOf<R extends ResourceName> = Schemas[`${R}Patch`];
export type PageOf<R extends ResourceName> = Schemas[`${R}Page`];
export type OperationId = keyof operations;
type FieldOf<R extends ResourceName> = R extends ResourceName ? keyof RecordOf<R> & string : never;
/** The plurals of the spec's list operations (`listPosts`: `Posts`). */
type Plural = keyof operations extends infer K ? (K extends `list${infer P}` ? P : never) : never;
export type Verb = 'list' | 'create' | 'get' | 'replace' | 'update' | 'delete' | 'export';
export type BulkVerb = 'bulkCreate' | 'bulkDelete';
type RecordOperationId =
  `${'list' | 'export'}${Plural}` | `${Exclude<Verb, 'list' | 'export'>}${ResourceName}` | `${BulkVerb}${Plural}` | HeadOperationId;
/** HEAD is declared beside every GET, and answered by the GET's handler. */
type HeadOperationId = `head${Plural}` | `head${ResourceName}` | `headExport${Plural}`;

// Compile-time check both ways: every operationId built below is in the spec, and every
// operation in the spec is one of them.
type Assert<T extends true> = T;
export type SpecHasOurs = Assert<RecordOperationId extends OperationId ? true : false>;
export type OursCoverSpec = Assert<Exclude<OperationId, ServiceOperationId> extends RecordOperationId ? true : false>;
/** Operations around the records (src/handlers/service.ts). */
type ServiceGetId = 'getOpenApiJson' | 'getOpenApiYaml' | 'getDocs' | 'getHealth' | 'getReadiness' | 'getMetrics' | 'getProblemType';
export type ServiceOperationId = ServiceGetId | (ServiceGetId extends `get${infer N}` ? `head${N}` : never);

/**
 * A collection, declared. Fields, their rules and defaults, and page limits come from the
 * spec's schemas; this says only what the spec cannot: where records live and how they are
 * searched and stored.
 */
export interface Collection<R extends ResourceName = ResourceName> {
  /** Path segment and table name. */
  name: string;
  /** Schema name in the spec: `R`, `RWrite`, `RPatch`, `RPage`. */
  resource: R;
  /** Plural used in the list operationId (`listPosts`). */
  plural: Plural;
  searchFields: readonly FieldOf<R>[];
  uniqueFields: readonly FieldOf<R>[];
  /** DECIMAL columns, answered as strings with exactly two decimals. */
  decimalFields: readonly FieldOf<R>[];
  /** Enumerated fields that `ordering` sorts by rank (their enum's order in the spec), not text. */
  rankedFields?: readonly FieldOf<R>[];
  /** List query parameters that filter, by name: the column and how it compares. */
  filters?: Readonly<Record<string, FilterSpec<FieldOf<R>>>>;
  /** Pairs of filters that bound a range: the first may not be above the second. */
  ranges?: readonly (readonly [string, string])[];
}

/** `eq`: equal; `gte`/`lte`: inclusive bound; `in`: one of a list; `stock`: true above 0, false at 0. */
export interface FilterSpec<F extends string = string> {
  column: F;
  op: 'eq' | 'gte' | 'lte' | 'in' | 'stock';
}

/** Checks field names against the resource's schema, then forgets R so all five share one type. */
function collection<R extends ResourceName>(c: Collection<R>): Collection {
  return c as unknown as Collection;
}

export const collections = [
  collection({
    name: 'posts',
    resource: 'Post',
    plural: 'Posts',
    searchFields: ['title', 'content'],
    uniqueFields: [],
    decimalFields: [],
    filters: { author: { column: 'author', op: 'eq' } },
  }),
  collection({
    name: 'products',
    resource: 'Product',
    plural: 'Products',
    searchFields: ['name', 'description'],
    uniqueFields: [],
    decimalFields: ['price'],
    filters: {
      min_price: { column: 'price', op: 'gte' },
      max_price: { column: 'price', op: 'lte' },
      in_stock: { column: 'stock', op: 'stock' },
    },
    ranges: [['min_price', 'max_price']],
  }),
  collection({
    name: 'books',
    resource: 'Book',
    plural: 'Books',
    searchFields: ['title', 'author'],
    uniqueFields: ['isbn'],
    decimalFields: [],
    filters: {
      genre: { column: 'genre', op: 'eq' },
      author: { column: 'author', op: 'eq' },
      published_after: { column: 'published_date', op: 'gte' },
      published_before: { column: 'published_date', op: 'lte' },
    },
    ranges: [['published_after', 'published_before']],
  }),
  collection({
    name: 'users',
    resource: 'User',
    plural: 'Users',
    searchFields: ['username', 'email'],
    uniqueFields: ['username', 'email'],
    decimalFields: [],
  }),
  collection({
    name: 'tasks',
    resource: 'Task',
    plural: 'Tasks',
    searchFields: ['title', 'description'],
    uniqueFields: [],
    decimalFields: [],
    rankedFields: ['priority'],
    filters: {
      status: { column: 'status', op: 'in' },
      priority: { column: 'priority', op: 'in' },
      due_after: { column: 'due_date', op: 'gte' },
      due_before: { column: 'due_date', op: 'lte' },
    },
    ranges: [['due_after', 'due_before']],
  }),
] as const;

/** The collection called `name`; for any other name, throws what `fail` makes of a message listing them. */
export function collectionNamed(name: string, fail: (message: string) => Error): Collection {
  const c = collections.find((x) => x.name === name);
  if (!c) throw fail(`--collection must be one of ${collections.map((x) => x.name).join(', ')}`);
  return c;
}

/** The operationIds of a collection's operations (HEAD's aside). */
export function operationIds(c: Collection): Record<Verb, RecordOperationId> {
  return {
    list: `list${c.plural}`,
    create: `create${c.resource}`,
    get: `get${c.resource}`,
    replace: `replace${c.resource}`,
    update: `update${c.resource}`,
    delete: `delete${c.resource}`,
    export: `export${c.plural}`,
  };
}

/** The operationIds of a collection's bulk operations (src/handlers/bulk.ts). */
export function bulkOperationIds(c: Collection): Record<BulkVerb, RecordOperationId> {
  return { bulkCreate: `bulkCreate${c.plural}`, bulkDelete: `bulkDelete${c.plural}` };
}

/** The HEAD operations of a collection, each with the verb whose GET answers it. */
export function headOperationIds(c: Collection): Record<HeadOperationId, 'list' | 'get' | 'export'> {
  return { [`head${c.plural}`]: 'list', [`head${c.resource}`]: 'get', [`headExport${c.plural}`]: 'export' } as Record<
    HeadOperationId,
    'list' | 'get' | 'export'
  >;
}

const byOperationId = new Map<string, Collection>(
  collections.flatMap((c) =>
    [...Object.values(operationIds(c)), ...Object.values(bulkOperationIds(c)), ...Object.keys(headOperationIds(c))].map(
      (id) => [id, c] as const,
    ),
  ),
);

/** The collection an operation belongs to (none for the service's own operations). */
export function collectionOf(operationId: string | undefined): Collection | undefined {
  return operationId === undefined ? undefined : byOperationId.get(operationId);
}

// A collection's parts of the spec, built as the first collections' parts are written: the same
// operations, parameters, responses and headers, in the same order, with descriptions made from
// the fields. tests/unit/scripts/new-collection.test.ts builds the first five this way and
// compares them with the spec, so this template cannot drift from it.
import { DECIMAL_PATTERN, type Draft, type FieldDraft, filterParams } from './draft';
import type { Json } from './yaml';

type JsonMap = { [key: string]: Json };

export interface SpecParts {
  tag: { name: string; description: string };
  paths: Record<string, JsonMap>;
  parameters: Record<string, JsonMap>;
  /** The write, patch, record and page schemas, and the schemas of defaulted or enumerated fields. */
  schemas: Record<string, JsonMap>;
  /** The bulk create's body and answer, which the spec keeps together after every collection. */
  bulkSchemas: Record<string, JsonMap>;
}

const DATE_PATTERN = '^[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}$';
const TIMESTAMP = '2026-11-22T09:32:05.156Z';

const ref = (kind: string, name: string): JsonMap => ({ $ref: `#/components/${kind}/${name}` });
const param = (name: string) => ref('parameters', name);
const schema = (name: string) => ref('schemas', name);

/** `a`, `a` and `b`, `a`, `b` and `c`. */
export function listed(items: string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
const code = (names: string[]) => names.map((n) => `\`${n}\``);
// `a user`, `an order`: a `u` that sounds as `you` is the common case.
const article = (word: string) => (/^[aeio]/.test(word) ? `an ${word}` : `a ${word}`);
const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

const RESPONSES: Record<string, string> = {
  '304': 'NotModified',
  '400': 'BadRequest',
  '401': 'Unauthorized',
  '403': 'Forbidden',
  '404': 'NotFound',
  '405': 'MethodNotAllowed',
  '406': 'NotAcceptable',
  '409': 'Conflict',
  '412': 'PreconditionFailed',
  '413': 'PayloadTooLarge',
  '415': 'UnsupportedMediaType',
  '422': 'IdempotencyKeyReused',
  '429': 'TooManyRequests',
  '500': 'InternalError',
  '503': 'ServiceUnavailable',
};

/** The named responses for these statuses, with any renamed (`404`: `PageNotFound`). */
function responses(statuses: string[], named: Record<string, string> = {}): JsonMap {
  return Object.fromEntries(statuses.map((s) => [s, ref('responses', named[s] ?? RESPONSES[s])]));
}

function headers(...names: string[]): JsonMap {
  return Object.fromEntries([...names, 'X-Request-Id', 'RateLimit', 'RateLimit-Policy'].map((h) => [h, ref('headers', h)]));
}

/** A JSON answer: its description, headers and schema. */
function answer(description: string, headerNames: string[], body: string): JsonMap {
  return { description, headers: headers(...headerNames), content: { 'application/json': { schema: schema(body) } } };
}

/** HEAD beside a GET: its parameters and statuses, GET's headers without a body, errors as HeadFailure. */
function headOf(get: JsonMap, operationId: string, summary: string, scope: string): JsonMap {
  const statuses = get.responses as JsonMap;
  const ok = statuses['200'] as JsonMap;
  return {
    operationId,
    tags: get.tags,
    summary: `${summary} (headers only)`,
    description: `The status and headers that \`GET\` answers, without the body; an error too is its status and headers alone. Needs the scope \`${scope}\`.`,
    'x-required-scopes': [scope],
    parameters: get.parameters,
    responses: Object.fromEntries(
      Object.entries(statuses).map(([s, r]) => [
        s,
        s === '200'
          ? { description: 'As `GET` answers it, without the body.', headers: ok.headers }
          : Number(s) >= 400
            ? ref('responses', 'HeadFailure')
            : r,
      ]),
    ),
  };
}

function operation(d: Draft, id: string, summary: string, description: string, scope: 'read' | 'write', rest: JsonMap): JsonMap {
  return {
    operationId: id,
    tags: [d.name],
    summary,
    description: `${description} Needs the scope \`${d.name}:${scope}\`.`,
    'x-required-scopes': [`${d.name}:${scope}`],
    ...rest,
  };
}

const own = (d: Draft, pick: (f: FieldDraft) => boolean) => d.fields.filter(pick).map((f) => f.name);

function listDescription(d: Draft): string {
  const sortable = d.fields.filter((f) => f.sort).map((f) => `\`${f.name}\`${f.rank ? ' (by rank)' : ''}`);
  const filters = code(filterParams(d.fields).map((p) => p.param));
  const sortAndFilter = [sortable.length ? `Sortable by ${listed(sortable)}` : '', filters.length ? `filter by ${listed(filters)}` : '']
    .filter(Boolean)
    .join('; ');
  return (
    `One page of ${d.pluralWords}, newest first unless \`ordering\` says otherwise, optionally filtered by \`search\` over ` +
    `${listed(code(own(d, (f) => f.search)))}. At most ${d.maxPageSize} a page.${sortAndFilter ? ` ${capital(sortAndFilter)}.` : ''}`
  );
}

function paths(d: Draft): Record<string, JsonMap> {
  const { name, resource: R, plural: P, singularWords: one, pluralWords: many } = d;
  const a = article(one);
  const read = `${name}:read`;
  const filtering = filterParams(d.fields).map((p) => param(`${name}_${p.param}`));
  const listing = [param('search'), param(`${name}_ordering`), ...filtering, param('RequestId')];
  const unique = d.fields.some((f) => f.unique) ? ['409'] : [];
  const conditional = [param('if_match'), param('if_none_match_write')];

  const list = operation(d, `list${P}`, `List ${many}`, listDescription(d), 'read', {
    parameters: [param('page'), param('cursor'), param(`page_size_${d.maxPageSize}`), ...listing],
    responses: {
      '200': answer(`A page of ${many}.`, [], `${R}Page`),
      ...responses(['400', '401', '403', '404', '405', '429', '500', '503'], { '404': 'PageNotFound' }),
    },
  });
  const create = operation(
    d,
    `create${R}`,
    `Create ${a}`,
    `Creates ${a} and answers it with its \`Location\` and \`ETag\`. With an \`Idempotency-Key\` it is safe to retry.`,
    'write',
    {
      parameters: [param('idempotency_key'), param('prefer'), param('RequestId')],
      requestBody: { required: true, content: { 'application/json': { schema: schema(`${R}Write`) } } },
      responses: {
        '201': answer(`The created ${one}.`, ['Location', 'ETag', 'Idempotent-Replayed'], R),
        '204': ref('responses', 'CreatedNoBody'),
        ...responses(['400', '401', '403', '405', '409', '413', '415', '422', '429', '500', '503']),
      },
    },
  );
  const exporting = operation(
    d,
    `export${P}`,
    `Export ${many}`,
    `Every ${one} that matches \`search\` and the filters, in the order of \`ordering\` (newest first by default), with no pages: NDJSON (\`Accept: application/x-ndjson\`, also for \`*/*\` or no \`Accept\`) or CSV (\`Accept: text/csv\`); see Exports. Takes the list's \`search\`, \`ordering\` and filters, with the same rules.`,
    'read',
    {
      parameters: listing,
      responses: {
        '200': {
          description: `Every matching ${one}, one per NDJSON line or CSV row, in the order asked.`,
          headers: headers('Content-Disposition'),
          content: { 'application/x-ndjson': { schema: schema('NdjsonExport') }, 'text/csv': { schema: schema('CsvExport') } },
        },
        ...responses(['400', '401', '403', '405', '406', '429', '500', '503']),
      },
    },
  );
  const get = operation(d, `get${R}`, `Get ${a}`, `The ${one} with this \`id\`.`, 'read', {
    parameters: [param('if_none_match'), param('RequestId')],
    responses: {
      '200': answer(`The ${one}.`, ['ETag'], R),
      ...responses(['304', '400', '401', '403', '404', '405', '429', '500', '503']),
    },
  });
  const write = (verb: string, summary: string, description: string, body: string, done: string) =>
    operation(d, `${verb}${R}`, summary, description, 'write', {
      parameters: [...conditional, param('prefer'), param('RequestId')],
      requestBody: { required: true, content: { 'application/json': { schema: schema(body) } } },
      responses: {
        '200': answer(`The ${done} ${one}.`, ['ETag'], R),
        '204': ref('responses', 'WrittenNoBody'),
        ...responses(['400', '401', '403', '404', '405', ...unique, '412', '413', '415', '429', '500', '503']),
      },
    });
  return {
    [`/api/${name}/`]: { get: list, head: headOf(list, `head${P}`, `List ${many}`, read), post: create },
    [`/api/${name}/export/`]: { get: exporting, head: headOf(exporting, `headExport${P}`, `Export ${many}`, read) },
    [`/api/${name}/{id}/`]: {
      parameters: [param('id')],
      get,
      head: headOf(get, `head${R}`, `Get ${a}`, read),
      put: write(
        'replace',
        `Replace ${a}`,
        `Replaces every client field of the ${one}; the body is the same as for create.`,
        `${R}Write`,
        'replaced',
      ),
      patch: write(
        'update',
        `Update part of ${a}`,
        'Changes the fields given in the body and leaves the others as they are.',
        `${R}Patch`,
        'updated',
      ),
      delete: operation(d, `delete${R}`, `Delete ${a}`, `Removes the ${one} for good.`, 'write', {
        parameters: [...conditional, param('RequestId')],
        responses: { '204': ref('responses', 'Deleted'), ...responses(['400', '401', '403', '404', '405', '412', '429', '500', '503']) },
      }),
    },
    [`/api/${name}/bulk/`]: {
      post: operation(
        d,
        `bulkCreate${P}`,
        `Create many ${many}`,
        `Creates 1 to 1,000 ${many} in one transaction, all or none, and answers them in the order sent. A record that breaks the contract is a 400 naming it as \`[index].field\`; a unique value that is taken (by a stored record, or by one earlier in the batch) is a 409 naming \`[index].field\`; either way nothing is written. With an \`Idempotency-Key\` it is safe to retry.`,
        'write',
        {
          parameters: [param('idempotency_key'), param('prefer'), param('RequestId')],
          requestBody: { required: true, content: { 'application/json': { schema: schema(`${R}BulkCreate`) } } },
          responses: {
            '201': answer(`The created ${many}, in the order sent.`, ['Idempotent-Replayed'], `${R}BulkCreated`),
            '204': ref('responses', 'BulkCreatedNoBody'),
            ...responses(['400', '401', '403', '405', '409', '413', '415', '422', '429', '500', '503']),
          },
        },
      ),
    },
    [`/api/${name}/bulk-delete/`]: {
      post: operation(
        d,
        `bulkDelete${P}`,
        `Delete many ${many}`,
        `Deletes the ${many} with these ids (1 to 1,000, each once) in one transaction, all or none. If any id names no record, nothing is deleted and the 404 names every id that is missing. A \`POST\` to its own path rather than a \`DELETE\` with a body, which many HTTP clients and generators drop.`,
        'write',
        {
          parameters: [param('RequestId')],
          requestBody: { required: true, content: { 'application/json': { schema: schema('BulkDelete') } } },
          responses: {
            '204': ref('responses', 'Deleted'),
            ...responses(['400', '401', '403', '404', '405', '413', '415', '429', '500', '503'], { '404': 'BulkNotFound' }),
          },
        },
      ),
    },
  };
}

/** A placeholder a person replaces: valid for the field, made of its name. */
function exampleOf(f: FieldDraft): Json {
  const given = f.example;
  switch (f.type) {
    case 'integer': {
      const v = given !== undefined ? Number(given) : 42;
      return v >= f.minimum! && v <= f.maximum! ? v : f.minimum!;
    }
    case 'boolean':
      return given === undefined ? true : given === 'true';
    case 'decimal':
      return given ?? '19.99';
    case 'date':
      return given ?? '2026-01-31';
    case 'email':
      return given ?? 'ada@example.com';
    case 'enum':
      return given ?? f.values![f.values!.length > 1 && f.default === f.values![0] ? 1 : 0];
    case 'text':
      return given ?? `An example ${f.name.replace(/_/g, ' ')}.`;
    default: {
      if (given !== undefined) return given;
      const text = `Example ${f.name.replace(/_/g, ' ')}`.slice(0, f.maxLength);
      return text.padEnd(f.minLength ?? 0, 'x');
    }
  }
}

/** Another example of a unique field, for the second record of a bulk create. */
function secondExample(f: FieldDraft): Json {
  const v = exampleOf(f);
  if (!f.unique || typeof v !== 'string') return v;
  if (f.type === 'email') return `2.${v}`;
  const other = `${v} (2)`;
  return [...other].length <= f.maxLength! ? other : `${v.slice(0, -1)}${v.endsWith('2') ? '3' : '2'}`;
}

/** A field with a schema of its own: an enum (filters name its values) or a default (ADR 0015). */
function namedSchema(d: Draft, f: FieldDraft): string | undefined {
  if (f.type === 'text' && f.default === '') return 'OptionalText';
  if (f.type === 'date' && !f.required) return 'NullableDate';
  if (f.type === 'enum' || !f.required) return `${d.resource}${f.name.replace(/(^|_)([a-z0-9])/g, (_m, _s, c: string) => c.toUpperCase())}`;
  return undefined;
}

/** The rules of a field's values: what a write schema and a filter parameter both state. */
function rules(d: Draft, f: FieldDraft): JsonMap {
  switch (f.type) {
    case 'string':
      return {
        type: 'string',
        ...(f.required || f.minLength ? { minLength: f.minLength ?? 1 } : {}),
        maxLength: f.maxLength!,
        ...(f.pattern !== undefined ? { pattern: f.pattern } : {}),
      };
    case 'text':
      return { type: 'string', ...(f.required ? { minLength: 1 } : {}) };
    case 'integer':
      return { type: 'integer', format: 'int32', minimum: f.minimum!, maximum: f.maximum! };
    case 'decimal':
      return { type: 'string', pattern: DECIMAL_PATTERN };
    case 'boolean':
      return { type: 'boolean' };
    case 'date':
      return { type: 'string', format: 'date', pattern: DATE_PATTERN };
    case 'email':
      return { type: 'string', format: 'email', maxLength: 254 };
    case 'enum':
      return { type: 'string', enum: f.values! };
  }
  throw new Error(`${d.name}.${f.name}: no rules for ${String(f.type)}`);
}

function describe(d: Draft, f: FieldDraft): string | undefined {
  const parts: string[] = [];
  if (f.type === 'text') parts.push('Bounded only by the request body limit.');
  if (f.type === 'decimal') parts.push('A decimal string from `0.00` to `99999999.99` with at most 2 decimals. Answered with exactly 2.');
  if (f.type === 'date')
    parts.push(f.required ? 'A calendar date, `YYYY-MM-DD`.' : 'A calendar date, `YYYY-MM-DD` (years 1000 to 9999), or null.');
  if (f.unique) parts.push(`Unique across ${d.pluralWords}${f.type === 'email' ? ', ignoring case' : ''}.`);
  if (!f.required) {
    const d0 = f.default;
    parts.push(`${d0 === '' ? 'Empty' : d0 === null ? 'Null' : `\`${String(d0)}\``} when a create or replace leaves it out.`);
  }
  if (f.rank) parts.push(`Sorts by rank, ${f.values!.map((v) => `\`${v}\``).join(' < ')}.`);
  return parts.length ? parts.join(' ') : undefined;
}

function fieldSchema(d: Draft, f: FieldDraft): JsonMap {
  const description = describe(d, f);
  return {
    ...rules(d, f),
    ...(f.type === 'date' && !f.required ? { nullable: true } : {}),
    ...(f.default !== undefined ? { default: f.default } : {}),
    ...(description ? { description } : {}),
    example: exampleOf(f),
  };
}

function schemas(d: Draft): { schemas: Record<string, JsonMap>; bulkSchemas: Record<string, JsonMap> } {
  const R = d.resource;
  const one = d.singularWords;
  const shared = ['OptionalText', 'NullableDate'];
  const named = new Map(d.fields.map((f) => [f.name, namedSchema(d, f)]));
  const client = (f: FieldDraft) => (named.get(f.name) ? schema(named.get(f.name)!) : undefined);
  const setByService = {
    id: schema('SetByServiceId'),
    created_at: schema('SetByServiceTimestamp'),
    updated_at: schema('SetByServiceTimestamp'),
  };
  const values = (second = false) => Object.fromEntries(d.fields.map((f) => [f.name, second ? secondExample(f) : exampleOf(f)]));
  const written = values();
  const stored: JsonMap = {
    id: 1,
    ...Object.fromEntries(d.fields.map((f) => [f.name, f.type === 'decimal' ? Number(written[f.name]).toFixed(2) : written[f.name]])),
    created_at: TIMESTAMP,
    updated_at: TIMESTAMP,
  };
  const required = d.fields.filter((f) => f.required).map((f) => f.name);
  const optional = d.fields.find((f) => !f.required) ?? d.fields[0];
  const own: Record<string, JsonMap> = {};
  for (const f of d.fields) {
    const name = named.get(f.name);
    if (name && !shared.includes(name)) own[name] = fieldSchema(d, f);
  }
  return {
    schemas: {
      [`${R}Write`]: {
        type: 'object',
        description: `${capital(article(one))} as sent on create and replace.`,
        example: written,
        additionalProperties: false,
        ...(required.length ? { required } : {}),
        properties: { ...Object.fromEntries(d.fields.map((f) => [f.name, client(f) ?? fieldSchema(d, f)])), ...setByService },
      },
      [`${R}Patch`]: {
        type: 'object',
        description: `Any subset of ${article(one)}'s fields; the others keep their values.`,
        additionalProperties: false,
        properties: {
          ...Object.fromEntries(d.fields.map((f) => [f.name, client(f) ?? schema(`${R}Write/properties/${f.name}`)])),
          ...setByService,
        },
        example: { [optional.name]: exampleOf(optional) },
      },
      [R]: {
        type: 'object',
        description: `${capital(article(one))}.`,
        example: stored,
        additionalProperties: false,
        required: ['id', ...d.fields.map((f) => f.name), 'created_at', 'updated_at'],
        properties: {
          id: schema('Id'),
          ...Object.fromEntries(
            d.fields.map((f) => [
              f.name,
              client(f) ??
                (f.type === 'decimal'
                  ? {
                      type: 'string',
                      pattern: '^(0|[1-9][0-9]{0,7})\\.[0-9]{2}$',
                      description: 'Always with 2 decimals.',
                      example: stored[f.name],
                    }
                  : schema(`${R}Write/properties/${f.name}`)),
            ]),
          ),
          created_at: schema('Timestamp'),
          updated_at: schema('Timestamp'),
        },
      },
      [`${R}Page`]: {
        example: { count: 11, next: `http://localhost:3000/api/${d.name}/?page=2`, previous: null, results: [stored] },
        allOf: [
          schema('PageEnvelope'),
          {
            type: 'object',
            required: ['results'],
            properties: { results: { type: 'array', maxItems: d.maxPageSize, items: schema(R) } },
          },
        ],
      },
      ...own,
    },
    bulkSchemas: {
      [`${R}BulkCreate`]: {
        type: 'array',
        description: `1 to 1,000 ${d.pluralWords}, each as for create.`,
        example: [written, values(true)],
        minItems: 1,
        maxItems: 1000,
        items: schema(`${R}Write`),
      },
      [`${R}BulkCreated`]: {
        type: 'object',
        description: `The created ${d.pluralWords}, in the order they were sent.`,
        example: { results: [stored] },
        additionalProperties: false,
        required: ['results'],
        properties: { results: { type: 'array', minItems: 1, maxItems: 1000, items: schema(R) } },
      },
    },
  };
}

const ORDERING = `Sort keys, comma-separated; \`-\` before a field sorts it descending. Ties are broken by \`id\`
(in the direction of the last key), so pages are stable. A field named again, in either
direction, counts once, at its first place; keys after \`id\` change nothing. Default:
\`-created_at,-id\`.
`;

function parameters(d: Draft): Record<string, JsonMap> {
  const many = d.pluralWords;
  const sortable = ['id', 'created_at', 'updated_at', ...own(d, (f) => f.sort)];
  const ranked = d.fields
    .filter((f) => f.rank)
    .map((f) => `\`${f.name}\` sorts by rank: ${f.values!.map((v) => `\`${v}\``).join(' < ')}.\n`);
  const first = d.fields.find((f) => f.sort)?.name;
  const out: Record<string, JsonMap> = {
    [`${d.name}_ordering`]: {
      name: 'ordering',
      in: 'query',
      description: ORDERING + ranked.join(''),
      style: 'form',
      explode: false,
      schema: {
        type: 'array',
        minItems: 1,
        maxItems: sortable.length,
        items: { type: 'string', enum: sortable.flatMap((k) => [k, `-${k}`]) },
      },
      example: first ? [first, '-created_at'] : ['-updated_at'],
    },
  };
  const named = (f: FieldDraft) => namedSchema(d, f)!;
  for (const { param: p, field: f, op } of filterParams(d.fields)) {
    const bounds = filterParams(d.fields).filter((x) => x.field === f);
    const low = bounds[0].param;
    const example = exampleOf(f);
    const restated = (): JsonMap => {
      if (f.type === 'date') return schema('FilterDate');
      const description =
        f.type === 'decimal'
          ? `A decimal string from \`0.00\` to \`99999999.99\` with at most 2 decimals, as \`${f.name}\` takes it.`
          : undefined;
      return { ...rules(d, f), ...(description ? { description } : {}), example };
    };
    const base = { name: p, in: 'query' };
    if (op === 'in')
      out[`${d.name}_${p}`] = {
        ...base,
        description: `Only ${many} with one of these \`${f.name}\` values (comma-separated).`,
        style: 'form',
        explode: false,
        // Bounded for the security lint (tasks' lists, older, are exempted in .spectral.yaml instead).
        schema: { type: 'array', minItems: 1, maxItems: f.values!.length, items: schema(named(f)) },
        example: [example],
      };
    else if (op === 'stock')
      out[`${d.name}_${p}`] = {
        ...base,
        description: `\`true\`: only ${many} with \`${f.name}\` above 0; \`false\`: only those with 0.`,
        schema: { type: 'boolean', example: true },
      };
    else {
      const what = f.type === 'date' ? 'this date' : 'this';
      const description =
        op === 'eq'
          ? `Only ${many} whose \`${f.name}\` is exactly this.`
          : op === 'gte'
            ? `Only ${many} whose \`${f.name}\` is ${f.type === 'date' ? 'on or after' : 'at least'} ${what}${f.type !== 'date' ? ' (inclusive)' : f.required ? '' : ` (${many} without one are left out)`}.`
            : `Only ${many} whose \`${f.name}\` is ${f.type === 'date' ? 'on or before' : 'at most'} ${what}. ${f.type === 'date' ? 'Before' : 'Below'} \`${low}\` is a 400.`;
      out[`${d.name}_${p}`] = { ...base, description, schema: restated() };
    }
  }
  return out;
}

export function specParts(d: Draft): SpecParts {
  const unique = own(d, (f) => f.unique);
  const uniqueSaid = unique.length ? `; ${listed(code(unique))} ${unique.length > 1 ? 'are' : 'is'} unique` : '';
  return {
    tag: { name: d.name, description: `${capital(d.pluralWords)}. Searchable by ${listed(code(own(d, (f) => f.search)))}${uniqueSaid}.` },
    paths: paths(d),
    parameters: parameters(d),
    ...schemas(d),
  };
}

/** The entry of `collections` (src/collections.ts), as `collection()` takes it. */
export function declarationOf(d: Draft): Record<string, Json> {
  const filters = filterParams(d.fields);
  const ranked = own(d, (f) => f.rank);
  const ranges = filters
    .filter((p) => p.op === 'gte')
    .map((low) => [low.param, filters.find((p) => p.field === low.field && p.op === 'lte')!.param]);
  return {
    name: d.name,
    resource: d.resource,
    plural: d.plural,
    searchFields: own(d, (f) => f.search),
    uniqueFields: own(d, (f) => f.unique),
    decimalFields: own(d, (f) => f.type === 'decimal'),
    ...(ranked.length ? { rankedFields: ranked } : {}),
    ...(filters.length ? { filters: Object.fromEntries(filters.map((p) => [p.param, { column: p.field.name, op: p.op }])) } : {}),
    ...(ranges.length ? { ranges } : {}),
  };
}

/** The declaration as TypeScript source, for Prettier to lay out. */
export function declaration(d: Draft): string {
  const source = (v: Json): string =>
    Array.isArray(v)
      ? `[${v.map(source).join(', ')}]`
      : v !== null && typeof v === 'object'
        ? `{ ${Object.entries(v)
            .map(([k, x]) => `${k}: ${source(x)}`)
            .join(', ')} }`
        : typeof v === 'string'
          ? `'${v}'`
          : String(v);
  return `  collection(${source(declarationOf(d))}),\n`;
}

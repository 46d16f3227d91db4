import type { OpenAPIV3 } from 'openapi-types';
import { bulkOperationIds, collections, operationIds } from '../../src/collections';
import { clientProperties, isSetByService, loadSpec } from '../../src/spec';
import { deref } from '../helpers/fuzz/spec';

// Rules the hand-written contract keeps for every operation, so that an operation added or edited
// by hand cannot silently lack what its neighbours document.
const spec = loadSpec();
const METHODS = ['get', 'head', 'put', 'post', 'delete', 'patch'] as const;
const API_ERRORS = ['400', '401', '405', '429', '500', '503'];

interface Op {
  id: string;
  method: (typeof METHODS)[number];
  path: string;
  raw: OpenAPIV3.OperationObject;
  responses: Record<string, OpenAPIV3.ResponseObject>;
  params: OpenAPIV3.ParameterObject[];
}

const ops: Op[] = Object.entries(spec.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => item?.[m]).map((m) => {
    const raw = item![m]!;
    return {
      id: raw.operationId!,
      method: m,
      path,
      raw,
      responses: deref(raw.responses, spec) as Record<string, OpenAPIV3.ResponseObject>,
      params: deref([...(item!.parameters ?? []), ...(raw.parameters ?? [])], spec) as OpenAPIV3.ParameterObject[],
    };
  }),
);
const api = ops.filter((o) => o.path.startsWith('/api/'));
const service = ops.filter((o) => !o.path.startsWith('/api/'));
const byId = new Map(ops.map((o) => [o.id, o]));
const paramNames = (op: Op) => op.params.map((p) => p.name);
const table = /^## Errors$[\s\S]*?(?=^## )/m.exec(spec.info.description ?? '')?.[0] ?? spec.info.description ?? '';

test.each(ops.map((o) => [o.id, o] as const))('%s takes X-Request-Id and every response echoes it', (_id, op) => {
  expect(paramNames(op)).toContain('X-Request-Id');
  for (const [status, response] of Object.entries(op.responses)) {
    expect([status, Object.keys(response.headers ?? {})]).toEqual([status, expect.arrayContaining(['X-Request-Id'])]);
  }
});

// The rate limit (RATE_LIMIT_PER_MINUTE) counts every /api/ request, whatever its answer, and
// nothing outside /api/ (src/http/access.ts).
test.each(ops.map((o) => [o.id, o] as const))('%s declares the rate limit headers on every response if it is under /api/', (_id, op) => {
  const limited = op.path.startsWith('/api/');
  for (const [status, response] of Object.entries(op.responses)) {
    const names = Object.keys(response.headers ?? {});
    expect([status, ['RateLimit', 'RateLimit-Policy'].map((h) => names.includes(h))]).toEqual([status, [limited, limited]]);
  }
});

test.each(ops.map((o) => [o.id, o] as const))('%s answers every error as problem+json, each status in the error table', (_id, op) => {
  for (const [status, response] of Object.entries(op.responses)) {
    if (Number(status) < 400) continue;
    // HEAD has no body, its problem included (checked below).
    if (op.method !== 'head') expect([status, Object.keys(response.content ?? {})]).toEqual([status, ['application/problem+json']]);
    expect([status, table.includes(`| ${status} |`)]).toEqual([status, true]);
  }
});

test.each(api.map((o) => [o.id, o] as const))('%s documents 400, 401, 405, 429, 500 and 503 and keeps the token requirement', (_id, op) => {
  expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(API_ERRORS));
  // The top-level requirement (the bearer token) applies: an /api/ operation does not override it.
  expect(op.raw.security).toBeUndefined();
});

// HEAD is answered wherever GET is, so it is declared beside every GET: generators and Prism then
// know it, and its answers carry GET's headers without a body.
const gets = ops.filter((o) => o.method === 'get');
test.each(gets.map((o) => [o.path, o] as const))('%s declares HEAD as its GET: parameters, statuses, headers, no body', (_path, get) => {
  const head = ops.find((o) => o.path === get.path && o.method === 'head');
  // listPosts: headPosts, getPost: headPost, exportPosts: headExportPosts.
  expect(head?.id).toBe(
    /^(list|get)[A-Z]/.test(get.id) ? get.id.replace(/^(list|get)/, 'head') : `head${get.id[0].toUpperCase()}${get.id.slice(1)}`,
  );
  expect(head!.raw.parameters).toEqual(get.raw.parameters);
  expect(head!.raw.security).toEqual(get.raw.security);
  expect(Object.keys(head!.responses)).toEqual(Object.keys(get.responses));
  for (const [status, response] of Object.entries(head!.responses)) {
    expect([status, response.content]).toEqual([status, undefined]);
    expect([status, Object.keys(response.headers ?? {})]).toEqual([
      status,
      expect.arrayContaining(Object.keys(get.responses[status].headers ?? {})),
    ]);
  }
});

test('the top-level security requirement names the bearer scheme', () => {
  expect(spec.security?.some((r) => 'bearerAuth' in r)).toBe(true);
  expect(spec.components?.securitySchemes?.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
});

test.each(service.map((o) => [o.id, o] as const))('%s (around the API) is open', (_id, op) => {
  expect(op.raw.security).toEqual([]);
});

describe.each(collections.map((c) => [c.name, c] as const))('the %s operations', (_name, c) => {
  const ids = operationIds(c);
  const list = byId.get(ids.list)!;
  const write = deref(spec.components!.schemas![`${c.resource}Write`], spec) as OpenAPIV3.SchemaObject;

  test('exist at the collection and record paths', () => {
    expect(Object.values(ids).map((id) => byId.get(id)?.path)).toEqual([
      `/api/${c.name}/`,
      `/api/${c.name}/`,
      `/api/${c.name}/{id}/`,
      `/api/${c.name}/{id}/`,
      `/api/${c.name}/{id}/`,
      `/api/${c.name}/{id}/`,
      `/api/${c.name}/export/`,
    ]);
  });

  // Exports are operations of their own, so that a list has one media type for generators to type.
  test('export takes the list parameters but the paging ones, and answers NDJSON or CSV; the list JSON only', () => {
    const exporting = byId.get(ids.export)!;
    expect(paramNames(exporting)).toEqual(paramNames(list).filter((p) => !['page', 'cursor', 'page_size'].includes(p)));
    expect(Object.keys(exporting.responses['200'].content ?? {})).toEqual(['application/x-ndjson', 'text/csv']);
    expect(Object.keys(exporting.responses)).toContain('406');
    expect(Object.keys(list.responses['200'].content ?? {})).toEqual(['application/json']);
  });

  test('list takes pages, cursors, search, ordering and every declared filter', () => {
    expect(paramNames(list)).toEqual(
      expect.arrayContaining(['page', 'cursor', 'page_size', 'search', 'ordering', ...Object.keys(c.filters ?? {})]),
    );
    expect(Object.keys(list.responses)).toContain('404');
  });

  // Written out per collection: every list sorts by id and the timestamps, each key both ways,
  // and takes as many keys as there are fields to sort by.
  test('ordering takes id, the timestamps and its own fields, each both ways, one key a field', () => {
    const schema = list.params.find((p) => p.name === 'ordering')!.schema as OpenAPIV3.ArraySchemaObject;
    const keys = (schema.items as OpenAPIV3.SchemaObject).enum as string[];
    const fields = keys.filter((k) => !k.startsWith('-'));
    expect(fields).toEqual(expect.arrayContaining(['id', 'created_at', 'updated_at']));
    expect([...keys].sort()).toEqual(fields.flatMap((f) => [f, `-${f}`]).sort());
    expect(schema.maxItems).toBe(fields.length);
  });

  test('the declared search, unique, decimal and ranked fields are write fields', () => {
    const declared = [...c.searchFields, ...c.uniqueFields, ...c.decimalFields, ...(c.rankedFields ?? [])];
    expect(declared.filter((f) => !(f in clientProperties(spec, c.resource)))).toEqual([]);
  });

  // openapi-typescript (with its defaults) makes a property that has its own `default` required, in
  // request bodies too: a field a client may leave out `$ref`s a named schema that carries the
  // default instead, and the record and the patch name the same schema (ADR 0015).
  test('a defaulted field is a $ref to the schema that holds its default, in write, patch and record alike', () => {
    const raw = (name: string) => (spec.components!.schemas![name] as OpenAPIV3.SchemaObject).properties ?? {};
    const defaulted = Object.entries(raw(`${c.resource}Write`)).filter(([, p]) => 'default' in deref<object>(p, spec));
    for (const [field, p] of Object.entries(raw(`${c.resource}Write`))) expect([field, 'default' in p]).toEqual([field, false]);
    expect(defaulted.map(([field]) => [field, raw(c.resource)[field], raw(`${c.resource}Patch`)[field]])).toEqual(
      defaulted.map(([field, p]) => [field, p, p]),
    );
    for (const [, p] of defaulted) expect(p).toHaveProperty('$ref');
  });

  // Server-set fields are typed as in the record (never `unknown` in a generated client), so a
  // record fetched is a body of its write type.
  test('id and the timestamps in a write schema are typed as in the record', () => {
    const record = deref(spec.components!.schemas![c.resource], spec) as OpenAPIV3.SchemaObject;
    const rules = (s: unknown) => {
      const { description: _d, example: _e, 'x-set-by-service': _x, ...rest } = deref(s, spec) as Record<string, unknown>;
      return rest;
    };
    for (const field of ['id', 'created_at', 'updated_at']) {
      expect([field, rules(write.properties![field])]).toEqual([field, rules(record.properties![field])]);
      expect(write.required ?? []).not.toContain(field);
    }
  });

  test('create is idempotent on request and answers Location, ETag and Idempotent-Replayed', () => {
    const create = byId.get(ids.create)!;
    expect(paramNames(create)).toContain('Idempotency-Key');
    expect(Object.keys(create.responses['201'].headers ?? {})).toEqual(expect.arrayContaining(['Location', 'ETag', 'Idempotent-Replayed']));
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['409', '413', '415', '422']));
  });

  // RFC 7240: any caller may ask for no body, and a token that may not read always gets none.
  test.each(['create', 'replace', 'update', 'bulkCreate'] as const)('%s takes Prefer and answers 204 with no body', (verb) => {
    const op = byId.get({ ...ids, ...bulkOperationIds(c) }[verb])!;
    expect(paramNames(op)).toContain('Prefer');
    expect(op.raw.responses['204']).toEqual({
      $ref: `#/components/responses/${{ create: 'Created', bulkCreate: 'BulkCreated' }[verb as string] ?? 'Written'}NoBody`,
    });
  });

  test('get is conditional on If-None-Match', () => {
    const get = byId.get(ids.get)!;
    expect(paramNames(get)).toContain('If-None-Match');
    expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(['200', '304', '404']));
  });

  test.each(['replace', 'update', 'delete'] as const)('%s is conditional on If-Match and If-None-Match', (verb) => {
    const op = byId.get(ids[verb])!;
    expect(paramNames(op)).toEqual(expect.arrayContaining(['If-Match', 'If-None-Match']));
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['404', '412']));
  });
});

// An unbounded integer would pass validation and fail in the database (or lose precision in JSON
// above 2^53): every integer a client sends to be stored fits an INT column (the ignored `id`, 2^53).
const integers = Object.entries(spec.components?.schemas ?? {}).flatMap(([name, schema]) =>
  name.endsWith('Write')
    ? Object.entries((deref(schema, spec) as OpenAPIV3.SchemaObject).properties ?? {})
        .filter(([, p]) => (p as OpenAPIV3.SchemaObject).type === 'integer' && !isSetByService(p))
        .map(([field, p]) => [`${name}.${field}`, p as OpenAPIV3.SchemaObject] as const)
    : [],
);

test.each(integers)('%s has a minimum and a maximum', (_field, schema) => {
  expect(typeof schema.minimum).toBe('number');
  expect(schema.maximum).toBeLessThanOrEqual(2_147_483_647);
});

// A parameter schema that `$ref`s another schema's property (`ProductWrite/properties/price`) is
// typed by orval as a type named after the property that it never declares: such parameters
// restate the property's rules, and must keep them equal to the field they filter.
const parameterSchemas = [
  ...Object.entries(spec.components?.parameters ?? {}).map(([name, p]) => [name, (p as OpenAPIV3.ParameterObject).schema] as const),
  ...ops.flatMap((o) => o.params.map((p) => [`${o.id} ${p.name}`, p.schema] as const)),
];

test.each(parameterSchemas)('parameter %s does not $ref into a schema property', (_name, schema) => {
  expect((schema as OpenAPIV3.ReferenceObject | undefined)?.$ref ?? '').not.toContain('/properties/');
});

const rangeFilters = collections.flatMap((c) =>
  Object.entries(c.filters ?? {})
    .filter(([, f]) => f.op === 'gte' || f.op === 'lte')
    .map(([name, f]) => [`${c.name} ${name}`, c, name, f.column] as const),
);

test.each(rangeFilters)('the range filter %s takes the values of its field', (_name, c, name, column) => {
  const rules = (s: unknown) => {
    const { description: _d, example: _e, default: _default, nullable: _n, ...rest } = deref(s, spec) as OpenAPIV3.SchemaObject;
    return rest;
  };
  const param = byId.get(operationIds(c).list)!.params.find((p) => p.name === name)!;
  const write = deref(spec.components!.schemas![`${c.resource}Write`], spec) as OpenAPIV3.SchemaObject;
  expect(rules(param.schema)).toEqual(rules(write.properties![column]));
});

// The spec's prose names each collection's search, unique and filter fields by hand: checked
// against the declarations, so that a collection added or changed later cannot leave it behind.
const searchTable = /^\| collection \| searched fields \|$[\s\S]*?(?=^$)/m.exec(spec.info.description ?? '')?.[0] ?? '';

// Its guide as one line, so that a phrase can be found wherever the text wraps.
const guide = (spec.info.description ?? '').replace(/\s+/g, ' ');

test.each(collections.map((c) => [c.name, c] as const))('the prose of %s names its search, unique and filter fields', (name, c) => {
  expect(searchTable).toContain(`| ${name} | ${c.searchFields.join(', ')} |`);
  const conflict = /^\| 409 \|.*$/m.exec(table)?.[0] ?? '';
  for (const field of c.uniqueFields) expect(conflict).toContain(`\`${name}.${field}\``);
  const list = byId.get(operationIds(c).list)!.raw.description ?? '';
  for (const field of [...c.searchFields, ...Object.keys(c.filters ?? {})])
    expect([field, list]).toEqual([field, expect.stringContaining(`\`${field}\``)]);
});

// The guide's sentences that list the collections (npm run new-collection adds to each).
test.each(collections.map((c) => [c.name, c] as const))('the guide names %s, its filters and its ranked fields', (name, c) => {
  const opening = /^[^.]*\./.exec(guide)?.[0] ?? '';
  expect(opening).toContain(`\`${name}\``);
  const filtered = /`next`\/`previous`: (.*?)\. Bounds are inclusive/.exec(guide)?.[1] ?? '';
  const said = filtered.split('; ').find((part) => part.startsWith(`${name} `)) ?? '';
  expect([...said.matchAll(/`(\w+)`/g)].map((m) => m[1])).toEqual(Object.keys(c.filters ?? {}));
  for (const field of c.rankedFields ?? []) expect(guide).toMatch(new RegExp(`'s \`${field}\` sorts by rank, `));
});

test('the search table has a row for each collection and no other', () => {
  expect(searchTable.split('\n').slice(2).filter(Boolean)).toHaveLength(collections.length);
});

// Parts a new collection copies from a neighbour: each must be made its own, or say so.
const pagination = /^ *\* `page_size` defaults to .*$/m.exec(spec.info.description ?? '')?.[0] ?? '';

describe.each(collections.map((c) => [c.name, c] as const))('what %s copied from a neighbour', (name, c) => {
  const list = byId.get(operationIds(c).list)!;
  const ordering = list.params.find((p) => p.name === 'ordering')!;
  const keys = ((ordering.schema as OpenAPIV3.ArraySchemaObject).items as OpenAPIV3.SchemaObject).enum as string[];
  const own = keys.filter((k) => !k.startsWith('-') && !['id', 'created_at', 'updated_at'].includes(k));
  const maximum = (list.params.find((p) => p.name === 'page_size')!.schema as OpenAPIV3.SchemaObject).maximum;

  test('the ordering example names only keys of its own ordering', () => {
    const example = (ordering.example ?? (ordering.schema as OpenAPIV3.SchemaObject).example ?? []) as string[];
    expect({ example, notSortableHere: example.filter((k) => !keys.includes(k)) }).toEqual({ example, notSortableHere: [] });
  });

  test('the list description names the ordering fields: "Sortable by ..."', () => {
    const sentence = /Sortable by ([^;.]*)/.exec(list.raw.description ?? '')?.[1] ?? '';
    expect([...sentence.matchAll(/`(\w+)`/g)].map((m) => m[1]).sort()).toEqual([...own].sort());
  });

  // Posts are served 10 a page, the others 100: a bound copied from posts must be chosen, and
  // then said in the guide, or it is a mistake.
  test("the page_size maximum is the one the guide's Pagination section gives it", () => {
    const special = Object.fromEntries([...pagination.matchAll(/at most (\d+) for `(\w+)`/g)].map((m) => [m[2], Number(m[1])]));
    const others = Number(/(\d+) for the other collections/.exec(pagination)?.[1]);
    expect({ page_size: maximum }).toEqual({ page_size: special[name] ?? others });
  });

  test('the list description says the page_size maximum: "At most N a page"', () => {
    expect(/At most (\d+) a page/.exec(list.raw.description ?? '')?.[1]).toBe(String(maximum));
  });
});

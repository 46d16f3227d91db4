import type { OpenAPIV3 } from 'openapi-types';
import { type Collection, collections } from '../../../src/collections';
import { clientProperties, loadSpec } from '../../../src/spec';
import { startTestApp, type RequestOptions, type TestApp, type TestResponse } from '../../helpers/app';
import { byName, fixtures, type Fixture } from '../../helpers/fixtures';

// Body validation, as docs/rules.md's "Fields" table and "Records" rules describe it, on create
// (POST), replace (PUT) and partial update (PATCH), plus the uniqueness rules and what happens
// when writes race. Every rejected write is followed by a check that nothing was stored.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

type Name = Fixture['name'];
type Body = Record<string, unknown>;
type Method = 'POST' | 'PUT' | 'PATCH';

const METHODS: Method[] = ['POST', 'PUT', 'PATCH'];
const SUCCESS: Record<Method, number> = { POST: 201, PUT: 200, PATCH: 200 };
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// Fixture bodies are made distinct by a number; a counter keeps unique fields (isbn, username,
// email) from colliding between tests, so that a 409 here is never an accident of the suite.
let seq = 1000;
const next = () => ++seq;

// Records made by a test are deleted after it, so that values a test accepted (a unique isbn,
// a username) can be used again by the next method's run of the same row.
let made: [Name, number][] = [];
afterEach(async () => {
  for (const [name, id] of made.reverse()) {
    const res = await app.request('DELETE', `/api/${name}/${id}/`);
    expect([204, 404]).toContain(res.status);
  }
  made = [];
});

/** The kind of rule the contract gives a client field, read from its write schema and declaration. */
type Kind = 'text' | 'patterned' | 'email' | 'decimal' | 'integer' | 'boolean' | 'date' | 'enum';
function kindOf(c: Collection, schema: OpenAPIV3.SchemaObject, field: string): Kind {
  if ((c.decimalFields as readonly string[]).includes(field)) return 'decimal';
  if (schema.type === 'integer') return 'integer';
  if (schema.type === 'boolean') return 'boolean';
  if (schema.format === 'date') return 'date';
  if (schema.format === 'email') return 'email';
  if (schema.enum) return 'enum';
  // A pattern (isbn, username) admits only some text: not a field for free text below.
  if (schema.pattern) return 'patterned';
  if (schema.type === 'string') return 'text';
  throw new Error(`${c.resource}Write.${field}: no kind for ${JSON.stringify(schema)}; add one to Kind and WRONG_TYPES`);
}
const spec = loadSpec();
const SCHEMAS: Record<Name, Record<string, OpenAPIV3.SchemaObject>> = Object.fromEntries(
  collections.map((c) => [c.name, clientProperties(spec, c.resource)]),
);
const FIELDS: Record<Name, Record<string, Kind>> = Object.fromEntries(
  collections.map((c) => [c.name, Object.fromEntries(Object.entries(SCHEMAS[c.name]).map(([field, s]) => [field, kindOf(c, s, field)]))]),
);
const fieldsOf = (name: Name, ...kinds: Kind[]) => Object.keys(FIELDS[name]).filter((k) => kinds.includes(FIELDS[name][k]));
/** A fixture's valid body holds exactly the required fields. */
const requiredOf = (name: Name) => Object.keys(byName[name].valid(0));

const perCollection = fixtures.map((f) => [f.name, f] as const);

/** A value for a test title: long strings are shortened to their first characters and length. */
function show(value: unknown): string {
  if (typeof value === 'string') {
    const chars = [...value];
    if (chars.length > 12) return `${JSON.stringify(chars.slice(0, 2).join(''))}×${chars.length}`;
  }
  return JSON.stringify(value) ?? String(value);
}

function without(body: Body, omit: readonly string[]): Body {
  return Object.fromEntries(Object.entries(body).filter(([k]) => !omit.includes(k)));
}

/** A valid email of exactly `length` characters, distinct per `n`. */
function emailOf(length: number, n: number): string {
  const domain = '@example.com';
  const tag = `e${n}.`;
  return tag + 'a'.repeat(length - domain.length - tag.length) + domain;
}

async function count(name: Name): Promise<number> {
  const res = await app.request('GET', `/api/${name}/`);
  expect(res.status).toBe(200);
  return res.body.count;
}

async function create(name: Name, body: Body = byName[name].valid(next())): Promise<any> {
  const res = await app.request('POST', `/api/${name}/`, { body });
  expect(res.status).toBe(201);
  made.push([name, res.body.id]);
  return res.body;
}

async function fetchRecord(name: Name, id: number): Promise<any> {
  const res = await app.request('GET', `/api/${name}/${id}/`);
  expect(res.status).toBe(200);
  return res.body;
}

/** A problem of `status`; the contract check (tests/helpers/contract.ts) holds its type to the status. */
function expectProblem(res: TestResponse, status: number, fields: readonly string[] = []): void {
  expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { type: expect.stringMatching(/^\/problems\//), status } });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json\b/);
  for (const field of fields) expect(res.body.errors).toContainEqual({ field, message: expect.any(String) });
}

interface Attempt {
  res: TestResponse;
  /** The record that PUT or PATCH was sent to, as it was before. */
  target?: any;
  /** The rejected write left the collection (POST) or the record (PUT, PATCH) as it was. */
  nothingChanged(): Promise<void>;
}

/**
 * Sends one write. POST goes to the collection, PUT and PATCH to a record made for the test.
 * `build` gets a valid base body (a fresh valid record for POST and PUT, `{}` for PATCH) and
 * returns the request to send.
 */
async function write(method: Method, name: Name, build: (base: Body) => RequestOptions): Promise<Attempt> {
  const f = byName[name];
  if (method === 'POST') {
    const before = await count(name);
    const res = await app.request('POST', `/api/${name}/`, build(f.valid(next())));
    if (res.status === 201) made.push([name, res.body.id]);
    return { res, nothingChanged: async () => expect(await count(name)).toBe(before) };
  }
  const target = await create(name);
  const res = await app.request(method, `/api/${name}/${target.id}/`, build(method === 'PUT' ? f.valid(next()) : {}));
  return { res, target, nothingChanged: async () => expect(await fetchRecord(name, target.id)).toEqual(target) };
}

const withFields =
  (fields: Body, omit: readonly string[] = []) =>
  (base: Body): RequestOptions => ({
    body: { ...without(base, omit), ...fields },
  });

/** The write succeeded, answered `fields` and stored them: a GET answers the same record. */
async function expectSaved(a: Attempt, method: Method, name: Name, fields: Body): Promise<any> {
  expect({ status: a.res.status, body: a.res.body }).toMatchObject({ status: SUCCESS[method], body: fields });
  if (a.target) expect(a.res.body.id).toBe(a.target.id);
  expect(await fetchRecord(name, a.res.body.id)).toEqual(a.res.body);
  return a.res.body;
}

// ---------------------------------------------------------------------------------------------
// Field rules, value by value
// ---------------------------------------------------------------------------------------------

interface FieldCase {
  given: { collection: Name; field: string; value: unknown };
  want: { accepted: true; stored: unknown } | { accepted: false; mentions?: string[] };
}
type FieldRow = [string, FieldCase];

const ok = (collection: Name, field: string, value: unknown, stored: unknown = value): FieldRow => [
  `${collection}.${field} = ${show(value)} is accepted${stored === value ? '' : ` as ${show(stored)}`}`,
  { given: { collection, field, value }, want: { accepted: true, stored } },
];
const bad = (collection: Name, field: string, value: unknown, mentions?: string[]): FieldRow => [
  `${collection}.${field} = ${show(value)} is rejected`,
  { given: { collection, field, value }, want: { accepted: false, mentions } },
];

// Lengths count code points: every character below is outside the BMP (two UTF-16 units, four
// UTF-8 bytes), so a limit counted in UTF-16 units or bytes rejects the "at the limit" row, and
// a column too narrow or not utf8mb4 fails to store it intact.
const E = '😀';
const G = '𝄞';
const HAN = '𠀀'; // a letter (Lo) outside the BMP, for the username rule
const lengthRows = (collection: Name, field: string, max: number, ch = E): FieldRow[] => [
  ok(collection, field, ch.repeat(max)),
  bad(collection, field, ch.repeat(max + 1)),
  bad(collection, field, 'a'.repeat(max + 1)),
];
const DATE_OK = ['1937-09-21', '2024-02-29', '1000-01-01', '9999-12-31'];
const DATE_BAD = [
  '2026-02-30',
  '2023-02-29',
  '2026-13-01',
  '2026-00-10',
  '2026-01-00',
  '26-01-01',
  '0999-01-01',
  '2026-01-01T00:00:00Z',
  '2026-01-01T00:00:00.000Z',
  '2026-1-1',
  '20260101',
  '2026/01/01',
  ' 2026-01-01',
  '',
];
const STATUSES = ['todo', 'in_progress', 'done'];
const PRIORITIES = ['low', 'medium', 'high'];

const FIELD_ROWS: FieldRow[] = [
  ...lengthRows('posts', 'title', 100),
  ...lengthRows('posts', 'author', 50, G),
  // content has no bound of its own: 20,000 emoji (80 KB) is far past every other field's limit.
  ok('posts', 'content', E.repeat(20000)),

  ...lengthRows('products', 'name', 200),
  ok('products', 'description', ''),
  ok('products', 'description', G.repeat(20000)),
  ok('products', 'price', '0', '0.00'),
  ok('products', 'price', '0.00'),
  ok('products', 'price', '0.5', '0.50'),
  ok('products', 'price', '5', '5.00'),
  ok('products', 'price', '19.9', '19.90'),
  ok('products', 'price', '19.99'),
  ok('products', 'price', '12345678.91'),
  ok('products', 'price', '99999999.99'),
  ...['-1', '-0.01', '1.234', '0.001', '100000000', '100000000.00', '1e3', ' 1', '1 ', '1,00', 'abc', ''].map((v) =>
    bad('products', 'price', v),
  ),
  bad('products', 'price', 19.99),
  bad('products', 'price', 0),
  ok('products', 'stock', 0),
  ok('products', 'stock', 7),
  ok('products', 'stock', 2147483647),
  ...[-1, 2147483648, 1.5, '5', '0'].map((v) => bad('products', 'stock', v)),

  ...lengthRows('books', 'title', 200),
  ...lengthRows('books', 'author', 100, G),
  ...lengthRows('books', 'genre', 50),
  ok('books', 'genre', ''),
  ...['012345678X', '0123456789', '9780306406157', '0000000000000'].map((v) => ok('books', 'isbn', v)),
  ...[
    '012345678',
    '01234567890',
    '012345678901',
    '01234567890123',
    '012345678x',
    'X123456789',
    '0-306-40615-2',
    '978-0-306-40615-7',
    '978 0306406157',
    ' 0123456789',
    '0123456789 ',
    '٠١٢٣٤٥٦٧٨٩',
    '',
  ].map((v) => bad('books', 'isbn', v)),
  ...DATE_OK.map((v) => ok('books', 'published_date', v)),
  ok('books', 'published_date', null),
  ...DATE_BAD.map((v) => bad('books', 'published_date', v)),

  ...lengthRows('users', 'username', 150, HAN),
  ...['José', 'Ünïcødé', '用户名', 'ada.lovelace', 'a.b+c-d_e@f', '12345', '_', 'Ada'].map((v) => ok('users', 'username', v)),
  // Stored in NFC: the combining accent is composed (docs/rules.md).
  ok('users', 'username', 'Jose\u0301', 'Jos\u00e9'),
  ...['john doe', ' john', 'john!', 'a/b', 'a\\b', 'a#b', 'a,b', "o'neil", E, 'tab\tname', 'a\u0000b'].map((v) =>
    bad('users', 'username', v),
  ),
  ok('users', 'email', 'ada@example.com'),
  ok('users', 'email', 'Ada.Lovelace+tag@Example.co.uk'),
  ok('users', 'email', emailOf(254, 1)),
  bad('users', 'email', emailOf(255, 2)),
  ...[
    'not-an-email',
    'a@b',
    'ada @example.com',
    ' ada@example.com',
    'ada@example.com ',
    'ada@exa mple.com',
    '@example.com',
    'ada@',
    'ada@@example.com',
  ].map((v) => bad('users', 'email', v)),
  ...lengthRows('users', 'first_name', 150, G),
  ...lengthRows('users', 'last_name', 150),
  ok('users', 'first_name', ''),
  ok('users', 'last_name', ''),

  ...lengthRows('tasks', 'title', 200, G),
  ok('tasks', 'description', ''),
  ...STATUSES.map((v) => ok('tasks', 'status', v)),
  ...['TODO', 'finished', 'in progress', ''].map((v) => bad('tasks', 'status', v, STATUSES)),
  ...PRIORITIES.map((v) => ok('tasks', 'priority', v)),
  ...['urgent', 'High', ''].map((v) => bad('tasks', 'priority', v, PRIORITIES)),
  ...DATE_OK.map((v) => ok('tasks', 'due_date', v)),
  ok('tasks', 'due_date', null),
  ...DATE_BAD.map((v) => bad('tasks', 'due_date', v)),
];

describe.each(METHODS)('field rules on %s', (method) => {
  test.each(FIELD_ROWS)('%s', async (_label, { given, want }) => {
    const a = await write(method, given.collection, withFields({ [given.field]: given.value }));
    if (want.accepted) {
      await expectSaved(a, method, given.collection, { [given.field]: want.stored });
      return;
    }
    expectProblem(a.res, 400, [given.field]);
    const messages = (a.res.body.errors as { field: string; message: string }[])
      .filter((e) => e.field === given.field)
      .map((e) => e.message)
      .join(' | ');
    // An enum's error lists what is allowed, so that a client can fix the request without the docs.
    for (const word of want.mentions ?? []) expect(messages).toContain(word);
    await a.nothingChanged();
  });
});

// ---------------------------------------------------------------------------------------------
// Types: a value of the wrong JSON type is rejected, never coerced or stored
// ---------------------------------------------------------------------------------------------

const WRONG_TYPES: Record<Kind, unknown[]> = {
  text: [42, 0, true, false, null, [], ['x'], {}, { value: 'x' }],
  patterned: [9780306406157, 42, true, null, ['ada'], { name: 'ada' }],
  email: [42, true, null, ['ada@example.com'], {}],
  decimal: [19.99, 5, true, null, ['19.99'], { amount: '19.99' }],
  integer: ['5', '', true, null, [5], { n: 5 }],
  boolean: ['true', 'false', 1, 0, null, [true], {}],
  date: [20260101, true, null, ['2026-01-01'], { date: '2026-01-01' }],
  enum: [1, true, null, ['todo'], {}],
};

describe.each(perCollection)('%s: wrong types', (name) => {
  // null is a nullable field's "no value" (a date's "no date"); every other wrong type is refused.
  const wrong = (field: string, kind: Kind) => WRONG_TYPES[kind].filter((v) => v !== null || !SCHEMAS[name][field].nullable);
  const rows: FieldRow[] = Object.entries(FIELDS[name]).flatMap(([field, kind]) => wrong(field, kind).map((v) => bad(name, field, v)));
  test.each(METHODS.flatMap((m) => rows.map(([label, c]) => [`${m}: ${label}`, { ...c, method: m }] as const)))(
    '%s',
    async (_label, { given, method }) => {
      const a = await write(method, name, withFields({ [given.field]: given.value }));
      expectProblem(a.res, 400, [given.field]);
      await a.nothingChanged();
    },
  );
});

// ---------------------------------------------------------------------------------------------
// Required fields and one error entry per problem
// ---------------------------------------------------------------------------------------------

describe.each(perCollection)('%s: required fields', (name) => {
  const required = requiredOf(name);
  const whole: Method[] = ['POST', 'PUT'];

  const missingRows = whole.flatMap((method) =>
    required.map((field) => [`${method} without ${field}`, { given: { method, omit: [field], extra: {} }, want: [field] }] as const),
  );
  // Two problems in one body give two entries: two missing fields where the resource has two
  // required fields, and everywhere a missing field plus an unknown property.
  const twoProblemRows = whole.flatMap((method) => [
    ...(required.length >= 2
      ? [
          [
            `${method} without ${required[0]} and ${required[1]}`,
            { given: { method, omit: required.slice(0, 2), extra: {} }, want: required.slice(0, 2) },
          ] as const,
        ]
      : []),
    [
      `${method} without ${required[0]} and with an unknown property`,
      { given: { method, omit: [required[0]], extra: { colour: 'red' } }, want: [required[0], 'colour'] },
    ] as const,
    [`${method} with an empty object`, { given: { method, omit: required, extra: {} }, want: required }] as const,
  ]);

  test.each([...missingRows, ...twoProblemRows])('%s: 400 with one entry per problem', async (_label, { given, want }) => {
    const a = await write(given.method, name, withFields(given.extra, given.omit));
    expectProblem(a.res, 400, want);
    expect(a.res.body.errors).toHaveLength(want.length);
    await a.nothingChanged();
  });

  // The empty string is a string, so the type check alone would let it through.
  const emptyRows = METHODS.flatMap((method) =>
    required.map((field) => [`${method} with ${field} = ""`, { given: { method, field }, want: 400 }] as const),
  );
  test.each(emptyRows)('%s: 400 naming the field', async (_label, { given, want }) => {
    const a = await write(given.method, name, withFields({ [given.field]: '' }));
    expectProblem(a.res, want, [given.field]);
    await a.nothingChanged();
  });

  test('PATCH with a too-long field and an empty required field answers both', async () => {
    const first = required.find((field) => SCHEMAS[name][field].maxLength !== undefined) ?? required[0];
    const second = required.find((field) => field !== first && SCHEMAS[name][field].type === 'string');
    const body = { [first]: HAN.repeat((SCHEMAS[name][first].maxLength ?? 255) + 1), ...(second ? { [second]: '' } : {}) };
    const want = second ? [first, second] : [first];
    const a = await write('PATCH', name, withFields(body));
    expectProblem(a.res, 400, want);
    expect(a.res.body.errors).toHaveLength(want.length);
    await a.nothingChanged();
  });
});

// ---------------------------------------------------------------------------------------------
// Defaults: an optional field left out takes its default on POST and on PUT (full replacement)
// ---------------------------------------------------------------------------------------------

describe.each(perCollection.filter(([, f]) => Object.keys(f.defaults).length))('%s: defaults', (name, f) => {
  test.each([
    ['POST without the optional fields', { given: 'POST' as const, want: f.defaults }],
    ['PUT without the optional fields resets them', { given: 'PUT' as const, want: f.defaults }],
  ])('%s', async (_label, { given, want }) => {
    if (given === 'POST') {
      const created = await create(name);
      expect(created).toMatchObject(want);
      return;
    }
    const target = await create(name);
    // Every optional field is moved off its default first, or the reset would prove nothing.
    const offDefault = Object.fromEntries(
      Object.entries(want).map(([k, v]) => [k, k in f.patch ? f.patch[k] : v === '' ? 'not the default' : v]),
    );
    const patched = await app.request('PATCH', `/api/${name}/${target.id}/`, { body: offDefault });
    expect(patched.status).toBe(200);
    for (const [field, value] of Object.entries(want)) expect(patched.body[field]).not.toEqual(value);
    const put = await app.request('PUT', `/api/${name}/${target.id}/`, { body: f.valid(next()) });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject(want);
    expect(await fetchRecord(name, target.id)).toEqual(put.body);
  });
});

// ---------------------------------------------------------------------------------------------
// Read-only and unknown properties
// ---------------------------------------------------------------------------------------------

describe.each(perCollection)('%s: read-only and unknown properties', (name, f) => {
  const readOnlyRows = METHODS.flatMap(
    (method) =>
      [
        [
          `${method} ignores id, created_at and updated_at of another record`,
          { given: { method, kind: 'other' as const }, want: SUCCESS[method] },
        ],
      ] as const,
  );

  // Typed as in the record, so that generated clients type them: a value of another type is a 400
  // naming each field, and nothing is written.
  test.each(METHODS)('%s with id, created_at and updated_at of the wrong types is a 400 naming them', async (method) => {
    const a = await write(method, name, withFields({ id: 'not an id', created_at: 42, updated_at: null }));
    expectProblem(a.res, 400, ['id', 'created_at', 'updated_at']);
    await a.nothingChanged();
  });

  test.each(readOnlyRows)('%s', async (_label, { given, want }) => {
    const other = await create(name);
    const readOnly = { id: other.id, created_at: '2000-01-01T00:00:00.000Z', updated_at: '2000-01-01T00:00:00.000Z' };
    const a = await write(given.method, name, (base) => ({ body: { ...base, ...(given.method === 'PATCH' ? f.patch : {}), ...readOnly } }));
    expect(a.res.status).toBe(want);
    const rec = a.res.body;
    expect(rec.id).not.toBe(other.id);
    if (a.target) {
      expect(rec.id).toBe(a.target.id);
      expect(rec.created_at).toBe(a.target.created_at);
      // The write may land in the same millisecond as the create; it must never go back in time.
      expect(rec.updated_at >= a.target.updated_at).toBe(true);
    } else {
      expect(rec.created_at).toBe(rec.updated_at);
    }
    expect(rec.created_at).toMatch(ISO_MS);
    expect(rec.created_at >= other.created_at).toBe(true);
    expect(await fetchRecord(name, rec.id)).toEqual(rec);
    // The record whose id was sent is untouched.
    expect(await fetchRecord(name, other.id)).toEqual(other);
  });

  test('GET, change, PUT the whole record back', async () => {
    const target = await create(name);
    const got = await fetchRecord(name, target.id);
    const put = await app.request('PUT', `/api/${name}/${target.id}/`, { body: { ...got, ...f.patch } });
    expect(put.status).toBe(200);
    const changed = name === 'products' ? { price: '5.00', stock: 3 } : f.patch;
    expect(put.body).toEqual({ ...got, ...changed, updated_at: expect.stringMatching(ISO_MS) });
    expect(await fetchRecord(name, target.id)).toEqual(put.body);
  });

  const first = requiredOf(name)[0];
  const capitalised = first[0].toUpperCase() + first.slice(1);
  const unknownRows = METHODS.flatMap((method) =>
    ['colour', 'createdAt', 'ID', capitalised, 'extra.field', ''].map(
      (prop) => [`${method} with unknown property ${JSON.stringify(prop)}`, { given: { method, prop }, want: [prop] }] as const,
    ),
  );
  test.each(unknownRows)('%s: 400 naming it', async (_label, { given, want }) => {
    const a = await write(given.method, name, withFields({ [given.prop]: 'x' }));
    expectProblem(a.res, 400, want);
    await a.nothingChanged();
  });

  // Sent as raw text: a JS object literal would not carry __proto__ as a property.
  test.each(METHODS)('%s with a "__proto__" property: 400 naming it', async (method) => {
    const a = await write(method, name, (base) => ({
      raw: `{"__proto__":{"admin":true}${Object.keys(base).length ? ',' : ''}${JSON.stringify(base).slice(1)}`,
    }));
    expectProblem(a.res, 400, ['__proto__']);
    await a.nothingChanged();
  });

  test('PATCH {} changes nothing, not even updated_at or the version', async () => {
    const target = await create(name);
    await new Promise((r) => setTimeout(r, 5));
    const res = await app.request('PATCH', `/api/${name}/${target.id}/`, { body: {} });
    expect([res.status, res.headers.get('etag')]).toEqual([200, '"1"']);
    expect(res.body).toEqual(target);
    expect(await fetchRecord(name, target.id)).toEqual(target);
  });
});

// ---------------------------------------------------------------------------------------------
// Bodies that are not a JSON object
// ---------------------------------------------------------------------------------------------

describe.each(perCollection)('%s: bodies that are not a JSON object', (name, f) => {
  const NOT_OBJECT: [string, { given: string; want: number }][] = [
    ['an empty array', { given: '[]', want: 400 }],
    ['an array holding a valid record', { given: JSON.stringify([f.valid(1)]), want: 400 }],
    ['a JSON string', { given: '"title"', want: 400 }],
    ['null', { given: 'null', want: 400 }],
    ['a number', { given: '42', want: 400 }],
    ['true', { given: 'true', want: 400 }],
    ['nothing at all', { given: '', want: 400 }],
  ];
  const MALFORMED: [string, { given: string; want: number }][] = [
    ['a cut-off object', { given: '{"title": ', want: 400 }],
    ['single quotes', { given: "{'title': 'x'}", want: 400 }],
    ['a trailing comma', { given: '{"title": "x",}', want: 400 }],
    ['unquoted keys', { given: '{title: "x"}', want: 400 }],
    ['a misspelled literal', { given: 'nul', want: 400 }],
    ['text after the object', { given: '{"title": "x"}}', want: 400 }],
    ['a raw control character in a string', { given: '{"title": "a\u0001b"}', want: 400 }],
  ];
  const rows = METHODS.flatMap((method) =>
    [...NOT_OBJECT, ...MALFORMED].map(([label, c]) => [`${method} with ${label}`, { ...c, method }] as const),
  );

  test.each(rows)('%s: 400 problem', async (_label, { given, want, method }) => {
    const a = await write(method, name, () => ({ raw: given }));
    expectProblem(a.res, want);
    await a.nothingChanged();
  });
});

// ---------------------------------------------------------------------------------------------
// Unicode: what UTF-8 cannot hold is refused; everything else comes back as it was sent
// ---------------------------------------------------------------------------------------------

/** Raw JSON of `base` with `field` set to the JSON string text `escaped` (kept escaped, as sent). */
function rawWith(base: Body, field: string, escaped: string): string {
  const rest = JSON.stringify(without(base, [field])).slice(1);
  return `{"${field}":"${escaped}"${rest === '}' ? '' : ','}${rest}`;
}

describe.each(perCollection)('%s: Unicode', (name) => {
  const stringFields = Object.keys(FIELDS[name]).filter((k) => !['integer', 'boolean'].includes(FIELDS[name][k]));
  const SURROGATES: [string, string][] = [
    ['a lone high surrogate', 'a\\ud800b'],
    ['a lone low surrogate', 'a\\udc00b'],
    ['a reversed pair', '\\udd1e\\ud834'],
    ['a high surrogate at the end', 'abc\\ud83d'],
  ];
  const surrogateRows = METHODS.flatMap((method) =>
    stringFields.flatMap((field) =>
      SURROGATES.map(
        ([label, escaped]) => [`${method} ${field} with ${label}`, { given: { method, field, escaped }, want: [field] }] as const,
      ),
    ),
  );
  test.each(surrogateRows)('%s: 400 naming the field, nothing stored', async (_label, { given, want }) => {
    const a = await write(given.method, name, (base) => ({ raw: rawWith(base, given.field, given.escaped) }));
    expectProblem(a.res, 400, want);
    await a.nothingChanged();
  });

  const text = fieldsOf(name, 'text');
  // An escaped, correctly paired surrogate is an ordinary 4-byte character.
  test.each(METHODS)('%s with an escaped surrogate pair stores the character', async (method) => {
    const a = await write(method, name, (base) => ({ raw: rawWith(base, text[0], 'clef \\ud834\\udd1e') }));
    await expectSaved(a, method, name, { [text[0]]: `clef ${G}` });
  });

  // The spec bars NUL from text (it cuts strings short in C-based tools that records go to).
  const nulRows = METHODS.flatMap((method) =>
    text.map((field) => [`${method} ${field}`, { given: { method, field, value: 'a\u0000b\u0000' }, want: [field] }] as const),
  );
  test.each(nulRows)('%s: a NUL character is 400 naming the field, nothing stored', async (_label, { given, want }) => {
    const a = await write(given.method, name, withFields({ [given.field]: given.value }));
    expectProblem(a.res, 400, want);
    await a.nothingChanged();
  });

  // Every text field at once, each with a different mix of 4-byte characters (and the username,
  // where only letters may go, with 4-byte letters), so that no column silently narrows them.
  test.each(METHODS)('%s: 4-byte characters in every text field are stored and returned intact', async (method) => {
    const values: Body = Object.fromEntries(text.map((field, i) => [field, `${E}${G} ${field} ${i} 👩‍💻 ${HAN}`]));
    if (name === 'users') values.username = `${HAN}𠀁${next()}`;
    const a = await write(method, name, withFields(values));
    await expectSaved(a, method, name, values);
  });
});

// ---------------------------------------------------------------------------------------------
// Uniqueness
// ---------------------------------------------------------------------------------------------

interface UniqueCase {
  given: { collection: Name; field: string; taken: string; sent: string };
  want: number;
}
const UNIQUE_ROWS: [string, UniqueCase][] = [
  ['books.isbn, ISBN-13', { given: { collection: 'books', field: 'isbn', taken: '9780306406157', sent: '9780306406157' }, want: 409 }],
  ['books.isbn, ISBN-10 with X', { given: { collection: 'books', field: 'isbn', taken: '080442957X', sent: '080442957X' }, want: 409 }],
  ['users.username', { given: { collection: 'users', field: 'username', taken: 'ada', sent: 'ada' }, want: 409 }],
  ['users.username, non-ASCII', { given: { collection: 'users', field: 'username', taken: 'José', sent: 'José' }, want: 409 }],
  ['users.email', { given: { collection: 'users', field: 'email', taken: 'ada@example.com', sent: 'ada@example.com' }, want: 409 }],
  [
    'users.email in other case',
    { given: { collection: 'users', field: 'email', taken: 'ada@example.com', sent: 'Ada@Example.com' }, want: 409 },
  ],
  [
    'users.email in upper case',
    { given: { collection: 'users', field: 'email', taken: 'Ada@Example.com', sent: 'ADA@EXAMPLE.COM' }, want: 409 },
  ],
  // The field is named from the database's error; a value that looks like another field's index
  // or column name must not make the answer name that other field.
  [
    'users.email that mentions the username index',
    {
      given: { collection: 'users', field: 'email', taken: 'users_username_unique@example.com', sent: 'users_username_unique@example.com' },
      want: 409,
    },
  ],
  [
    'users.email that mentions the username column',
    { given: { collection: 'users', field: 'email', taken: 'users.username@example.com', sent: 'users.username@example.com' }, want: 409 },
  ],
  [
    'users.username that mentions the email column',
    { given: { collection: 'users', field: 'username', taken: 'users.email', sent: 'users.email' }, want: 409 },
  ],
];

describe.each(METHODS)('uniqueness on %s', (method) => {
  test.each(UNIQUE_ROWS)('%s: 409 naming the field, nothing changed', async (_label, { given, want }) => {
    const { collection, field, taken, sent } = given;
    const holder = await create(collection, { ...byName[collection].valid(next()), [field]: taken });
    const a = await write(method, collection, withFields({ [field]: sent }));
    expectProblem(a.res, want, [field]);
    expect(a.res.body.errors).toHaveLength(1);
    await a.nothingChanged();
    expect(await fetchRecord(collection, holder.id)).toEqual(holder);
  });
});

interface NoConflictCase {
  given: { collection: Name; field: string; first: string; second: string; same?: boolean };
  want: number;
}
describe('values that do not conflict', () => {
  test.each<[string, NoConflictCase]>([
    // The contract makes email unique "case-insensitive" and username only "unique": usernames
    // that differ in case are different usernames.
    ['usernames differing only in case', { given: { collection: 'users', field: 'username', first: 'Grace', second: 'grace' }, want: 201 }],
    [
      'usernames differing only in an accent',
      { given: { collection: 'users', field: 'username', first: 'Jose', second: 'José' }, want: 201 },
    ],
    [
      'emails differing in one character',
      { given: { collection: 'users', field: 'email', first: 'a-b@example.com', second: 'ab@example.com' }, want: 201 },
    ],
    [
      'ISBN-10 and ISBN-13 with the same digits',
      { given: { collection: 'books', field: 'isbn', first: '0306406152', second: '0000306406152' }, want: 201 },
    ],
  ])('%s: both are created', async (_label, { given, want }) => {
    const { collection, field, first, second } = given;
    await create(collection, { ...byName[collection].valid(next()), [field]: first });
    const res = await app.request('POST', `/api/${collection}/`, { body: { ...byName[collection].valid(next()), [field]: second } });
    expect(res.status).toBe(want);
    made.push([collection, res.body.id]);
    expect(res.body[field]).toBe(second);
  });

  const own: [string, { given: { collection: Name; method: 'PUT' | 'PATCH'; field: string; value: string }; want: number }][] = [
    ['PUT a book with its own isbn', { given: { collection: 'books', method: 'PUT', field: 'isbn', value: '9780201633610' }, want: 200 }],
    [
      'PATCH a book with its own isbn',
      { given: { collection: 'books', method: 'PATCH', field: 'isbn', value: '9780201633610' }, want: 200 },
    ],
    ['PUT a user with its own username', { given: { collection: 'users', method: 'PUT', field: 'username', value: 'hopper' }, want: 200 }],
    [
      'PATCH a user with its own username',
      { given: { collection: 'users', method: 'PATCH', field: 'username', value: 'hopper' }, want: 200 },
    ],
    [
      'PATCH a user with its own email in other case',
      { given: { collection: 'users', method: 'PATCH', field: 'email', value: 'Hopper@Example.com' }, want: 200 },
    ],
    [
      'PUT a user with its own email in other case',
      { given: { collection: 'users', method: 'PUT', field: 'email', value: 'HOPPER@example.com' }, want: 200 },
    ],
  ];
  // A record never conflicts with itself.
  test.each(own)('%s: 200', async (_label, { given, want }) => {
    const { collection, method, field, value } = given;
    const base = { ...byName[collection].valid(next()), [field]: field === 'email' ? value.toLowerCase() : value };
    const target = await create(collection, base);
    const body = method === 'PUT' ? { ...base, [field]: value } : { [field]: value };
    const res = await app.request(method, `/api/${collection}/${target.id}/`, { body });
    expect(res.status).toBe(want);
    expect(res.body[field]).toBe(value);
    expect(await fetchRecord(collection, target.id)).toEqual(res.body);
  });

  test.each([
    ['books', 'isbn', '9780131103627'],
    ['users', 'email', 'knuth@example.com'],
    ['users', 'username', 'knuth'],
  ] as const)('a deleted record frees its %s.%s', async (collection, field, value) => {
    const first = await create(collection, { ...byName[collection].valid(next()), [field]: value });
    expect((await app.request('DELETE', `/api/${collection}/${first.id}/`)).status).toBe(204);
    const again = await create(collection, { ...byName[collection].valid(next()), [field]: value });
    expect(again[field]).toBe(value);
  });
});

// ---------------------------------------------------------------------------------------------
// Concurrent writes
// ---------------------------------------------------------------------------------------------

describe('concurrent creates', () => {
  test.each(perCollection)('%s: 20 parallel creates of distinct records all succeed', async (name, f) => {
    const before = await count(name);
    const bodies = Array.from({ length: 20 }, () => f.valid(next()));
    const results = await Promise.all(bodies.map((body) => app.request('POST', `/api/${name}/`, { body })));
    for (const r of results) if (r.status === 201) made.push([name, r.body.id]);
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(20);
    results.forEach((r, i) => expect(r.body).toMatchObject(name === 'products' ? { ...bodies[i], price: '19.99' } : bodies[i]));
    expect(await count(name)).toBe(before + 20);
  });

  const RACES: [string, { given: { collection: Name; field: string; values: string[] }; want: { created: number; conflicts: number } }][] =
    [
      [
        '10 books with the same isbn',
        { given: { collection: 'books', field: 'isbn', values: Array(10).fill('9781718500457') }, want: { created: 1, conflicts: 9 } },
      ],
      [
        '10 users with the same username',
        { given: { collection: 'users', field: 'username', values: Array(10).fill('racer') }, want: { created: 1, conflicts: 9 } },
      ],
      [
        '10 users with the same email in different cases',
        {
          given: {
            collection: 'users',
            field: 'email',
            values: Array.from({ length: 10 }, (_, i) => (i % 2 ? 'RACE@example.com' : 'race@Example.com')),
          },
          want: { created: 1, conflicts: 9 },
        },
      ],
    ];
  test.each(RACES)('%s: exactly one is created, the others get 409', async (_label, { given, want }) => {
    const { collection, field, values } = given;
    const before = await count(collection);
    const results = await Promise.all(
      values.map((v) => app.request('POST', `/api/${collection}/`, { body: { ...byName[collection].valid(next()), [field]: v } })),
    );
    for (const r of results) if (r.status === 201) made.push([collection, r.body.id]);
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(want.created).fill(201), ...Array(want.conflicts).fill(409)]);
    for (const r of results.filter((x) => x.status === 409)) expectProblem(r, 409, [field]);
    expect(await count(collection)).toBe(before + want.created);
  });
});

// The compiled response serializers (src/http/json.ts) write exactly what JSON.stringify writes,
// for every collection's record and page, over generated records: any Unicode (lone surrogates,
// control characters, quotes and backslashes included), nulls, and decimals in every stored form.
import fc from 'fast-check';
import { OpenAPIBackend, type Operation } from 'openapi-backend';
import { type Collection, collections, operationIds } from '../../../src/collections';
import type { Row } from '../../../src/db/records';
import { dbTimestamp } from '../../../src/db/time';
import { recordSerializer } from '../../../src/handlers/serialize';
import { stringifier } from '../../../src/handlers/json';
import { clientProperties, loadSpec } from '../../../src/spec';

const spec = loadSpec();
let operations: Map<string, Operation>;

beforeAll(async () => {
  const api = new OpenAPIBackend({ definition: loadSpec(), strict: true, validate: false, quick: false });
  await api.init();
  operations = new Map(api.router.getOperations().map((op) => [op.operationId ?? '', op]));
});

const EDGES = [
  '',
  '"',
  '\\',
  '\u0000\u001f\u007f',
  '\u2028\u2029',
  'é ñ ß',
  '日本語',
  '👍🏽 family: 👨‍👩‍👧',
  '\ud800',
  'x\udfffy',
  '</script>',
  'a'.repeat(5000),
];
const text = fc.oneof(fc.constantFrom(...EDGES), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme', maxLength: 60 }));
/** DECIMAL as MySQL returns it, SQLite's REAL, or the string a client sent. */
const decimal = fc.oneof(
  fc.constantFrom('0.00', '12.50', '99999999.99', '7'),
  fc.double({ min: 0, max: 99_999_999, noNaN: true }).map((n) => Math.round(n * 100) / 100),
  fc.nat({ max: 9_999_999_999 }).map((cents) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`),
);
const timestamp = fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => dbTimestamp(ms));
const date = fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => new Date(ms).toISOString().slice(0, 10));

/** A stored row of the collection, its columns generated from the spec's write schema. */
function row(c: Collection): fc.Arbitrary<Row> {
  const columns = Object.entries(clientProperties(spec, c.resource)).map(([name, s]) => {
    let value: fc.Arbitrary<unknown> = (c.decimalFields as readonly string[]).includes(name)
      ? decimal
      : s.enum
        ? fc.constantFrom(...s.enum)
        : s.type === 'integer'
          ? fc.integer({ min: 0, max: 2_147_483_647 })
          : s.format === 'date'
            ? date
            : text;
    if (s.nullable) value = fc.option(value, { nil: null });
    return [name, value] as const;
  });
  return fc.record({
    id: fc.oneof(fc.integer({ min: 1, max: 2 ** 53 - 1 }), fc.integer({ min: 1 }).map(String)),
    version: fc.integer({ min: 1 }),
    created_at: timestamp,
    updated_at: timestamp,
    ...Object.fromEntries(columns),
  });
}

const link = fc.option(
  fc.string({ unit: 'binary' }).map((q) => `http://localhost:3000/api/x/?page=2&search=${encodeURIComponent(q)}`),
  { nil: null },
);

describe.each(collections.map((c) => [c.name, c] as const))('%s', (_name, c) => {
  const serialize = recordSerializer(spec, c);
  const ids = operationIds(c);

  test.each([
    [ids.get, 200],
    [ids.create, 201],
    [ids.replace, 200],
    [ids.update, 200],
  ])('%s %i: a record as JSON.stringify writes it', (operationId, status) => {
    const stringify = stringifier(operations.get(operationId)!, status);
    expect(stringify).not.toBe(JSON.stringify);
    fc.assert(
      fc.property(row(c), (r) => {
        const record = serialize(r);
        expect(stringify(record)).toBe(JSON.stringify(record));
      }),
      { numRuns: 300 },
    );
  });

  test(`${ids.list} 200: a page (offset and cursor mode) as JSON.stringify writes it`, () => {
    const stringify = stringifier(operations.get(ids.list)!, 200);
    expect(stringify).not.toBe(JSON.stringify);
    fc.assert(
      fc.property(fc.array(row(c), { maxLength: 10 }), fc.option(fc.nat(), { nil: null }), link, link, (rows, count, next, previous) => {
        const page = { count, next, previous, results: rows.map(serialize) };
        expect(stringify(page)).toBe(JSON.stringify(page));
      }),
      { numRuns: 200 },
    );
  });
});

import fc from 'fast-check';
import { broken, text, valid } from './arbitraries';
import { isSetByService } from '../../../src/spec';
import type { Operation, Param, Schema } from './spec';

/**
 * One request to send, drawn from an operation's schemas: valid, or broken on purpose in one
 * named way. Choices that depend on what the database holds (which record, which value to
 * collide with or filter by, which ETag, idempotency key or cursor to send) are kept abstract
 * here and made when the request is sent.
 */
export type IdChoice = { kind: 'known'; n: number } | { kind: 'any'; id: number } | { kind: 'odd'; raw: string };

/** One entity tag of an If-Match or If-None-Match list, relative to the record's current version. */
export type TagChoice =
  | { kind: 'current'; weak: boolean }
  /** Another version: `delta` added (or subtracted when that stays at 0 or above). */
  | { kind: 'other'; weak: boolean; delta: number }
  /** The current version with leading zeros: another opaque tag, which matches nothing. */
  | { kind: 'zeros'; weak: boolean; zeros: number }
  | { kind: 'opaque'; weak: boolean; value: string };

export interface Conditional {
  header: 'If-Match' | 'If-None-Match';
  /** `*`, or a list of tags joined by `separator`. */
  star: boolean;
  tags: TagChoice[];
  separator: string;
  /** Spoiled by a last element that is no entity tag (`w/"3"`): the header names none. */
  malformed: boolean;
}

/**
 * An Idempotency-Key: a new one, or the n-th one used before (in this collection, or any) with
 * this plan's body or with the body it was first sent with: as sent, with its keys in another
 * order, or pretty-printed (the same JSON document all three).
 */
export type IdemChoice = { kind: 'new'; key: string } | { kind: 'reuse'; n: number; own: boolean; sameBody: boolean; shape: 0 | 1 | 2 };

/**
 * Cursor pagination. `start`: `cursor=` and then up to `pages` pages along `next`, and back along
 * `previous`. `resume`: the n-th cursor handed out, with its own query (and maybe another page size).
 */
export type CursorChoice = { kind: 'start'; pages: number } | { kind: 'resume'; n: number; pageSize?: number };

/** A cursor that must be refused: altered, another query's, another collection's, or beside `page`. */
export type BadCursor =
  | { kind: 'altered'; n: number; at: number; how: 'flip' | 'cut' | 'add' | 'dot' }
  | { kind: 'otherQuery'; n: number; change: number }
  | { kind: 'otherCollection'; n: number }
  | { kind: 'withPage'; n: number; page: number };

/** Several requests at once: writes with the same If-Match, or creates with the same Idempotency-Key. */
export type Race = { kind: 'writes'; n: number; deletes: boolean[] } | { kind: 'creates'; copies: number; key: string };

/** Take a filter's value from the n-th known record, maybe changed a little (`tweak`). */
export interface FilterFrom {
  param: string;
  n: number;
  tweak: number;
}

export interface Plan {
  op: Operation;
  id?: IdChoice;
  /** Path parameters other than a record's id (a problem type's `kind`), as sent. */
  pathParams?: Record<string, string>;
  /** Encoded `name=value` pairs. */
  query: string[];
  body?: unknown;
  /** Body text to send as is, instead of `body` as JSON. */
  raw?: string;
  /** Headers sent as they are (broken ones). */
  headers?: Record<string, string>;
  /** Broken on purpose: the status it must get and the field the problem must name. */
  broken?: { status: 400 | 404; field?: string; why: string };
  /** Give this unique field the value that the n-th known record has (upper-cased, maybe). */
  collide?: { n: number; field: string; upper: boolean };
  /** Search for a piece of what the n-th known record holds in this search field (maybe starting at a non-ASCII character). */
  searchFrom?: { n: number; field: string; start: number; length: number; nonAscii: boolean };
  filterFrom?: FilterFrom[];
  cond?: Conditional;
  idem?: IdemChoice;
  cursor?: CursorChoice;
  badCursor?: BadCursor;
  race?: Race;
}

type Part = Partial<Plan>;

/** The plan, shown in a counterexample by its operation's id instead of the whole operation. */
function labelled(plan: Plan): Plan {
  const { op, ...rest } = plan;
  return Object.defineProperty(plan, fc.toStringMethod, { value: () => `${op.id} ${fc.stringify(rest)}` });
}

export interface PlanOptions {
  uniqueFields: readonly string[];
  searchFields: readonly string[];
  /** List filters by parameter: the record field a value can be taken from. */
  filterFields: Readonly<Record<string, string>>;
  /** [lower, upper] filter pairs. */
  ranges: readonly (readonly [string, string])[];
  /** Parameters a cursor is bound to (ordering, search, filters). */
  cursorBound: readonly string[];
}

// Path ids that are not positive integers (or are too large to be one): the contract's 404.
const ODD_IDS = [
  '0',
  '-1',
  '1.5',
  'abc',
  '0x1',
  '1e3',
  '+1',
  '%201',
  '1%20',
  '9007199254740992',
  '99999999999999999999',
  '%00',
  '1%00',
  '%ED%A0%80',
  '%FF',
  '%',
  '%zz',
  '1%2F2',
  '%EF%BC%91',
  'null',
  '[]',
];
// Query integers that are not plain decimal digits within the bounds.
const BAD_INTEGERS = [
  '0',
  '-1',
  '1.5',
  'abc',
  '0x10',
  '1e1',
  '',
  '%201',
  '+1',
  '9007199254740992',
  '99999999999999999999',
  '%00',
  '1%00',
  '%ED%A0%80',
  '%FF',
  '%EF%BC%91',
  'true',
  '[]',
];
// Query booleans are `true` and `false`, nothing else.
const BAD_BOOLEANS = ['', '1', '0', 'TRUE', 'False', 'yes', 'no', 'on', 'null', '%20true', 'true%20', 'true,false', '%00', '%FF', 't'];

/** Percent-encodes text, unpaired surrogates included (as the WTF-8 bytes no UTF-8 decoder takes). */
export function encodeLoose(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    if (pair) out += encodeURIComponent(s.slice(i, ++i + 1));
    else if (c >= 0xd800 && c <= 0xdfff)
      out += Buffer.from([0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)])
        .toString('hex')
        .replace(/../g, '%$&')
        .toUpperCase();
    else out += encodeURIComponent(s[i]);
  }
  return out;
}

/** A query parameter's value as the spec serializes it: arrays with `explode: false` comma-joined. */
export function encodeParam(p: Param, value: unknown): string[] {
  if (!Array.isArray(value)) return [`${p.name}=${encodeLoose(String(value))}`];
  if (p.explode === false) return [`${p.name}=${value.map((v) => encodeLoose(String(v))).join(',')}`];
  return value.map((v) => `${p.name}=${encodeLoose(String(v))}`);
}

export const queryParams = (op: Operation) => op.params.filter((p) => p.in === 'query');
const headerParam = (op: Operation, name: string) => op.params.find((p) => p.in === 'header' && p.name === name);
const hasId = (op: Operation) => op.params.some((p) => p.in === 'path' && p.name === 'id');
/** Path parameters that name no record: drawn from their schemas (an enum: one of its values). */
const otherPathParams = (op: Operation) => op.params.filter((p) => p.in === 'path' && p.name !== 'id');
/** A body schema's fields that a client sets (those set by the service left out). */
export const writable = (s: Schema) => Object.entries(s.properties ?? {}).filter(([, p]) => !isSetByService(p)) as [string, Schema][];
const withoutParams = (query: string[], names: readonly string[]) => query.filter((q) => !names.some((n) => q.startsWith(`${n}=`)));

/**
 * Each query parameter, present or not, from its schema. `cursor` is `cursor=` (the first page)
 * when present: any other value is a cursor this service never issued (see the broken plans).
 */
function validQuery(op: Operation, skip: readonly string[] = []): fc.Arbitrary<string[]> {
  const pairs = queryParams(op)
    .filter((p) => !skip.includes(p.name))
    .map((p) => {
      const value = p.name === 'cursor' ? fc.constant('') : valid(p.schema);
      // Random text rarely equals a record's: an exact filter with it mostly empties the list.
      const often = PRESENT[p.name] ?? (p.schema.type === 'string' && !p.schema.pattern && !p.schema.format ? 5 : 15);
      return maybe(
        value.map((v) => encodeParam(p, v)),
        often,
      );
    });
  // A parameter that the operation does not define is ignored (and kept in next/previous).
  const unknown = maybe(
    fc
      .tuple(fc.constantFrom('Page', 'ORDERING', 'sort', 'q', 'filter[author]', 'page_size ', 'limit'), text(0, 8))
      .map(([k, v]) => [`${encodeURIComponent(k)}=${encodeLoose(v)}`]),
    10,
  );
  return fc
    .tuple(fc.tuple(...pairs), unknown)
    .map(([all, extra]) => [...all.flat().filter((q): q is string => q !== undefined), ...(extra ?? [])]);
}

/** How often (percent) a query parameter is there; filters with random values rarely match, so they are rarer. */
const PRESENT: Record<string, number> = { page: 35, page_size: 60, search: 25, ordering: 55, cursor: 8 };

/** The value `percent` times in a hundred, else undefined. */
function maybe<T>(arb: fc.Arbitrary<T>, percent: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: 100 - percent, arbitrary: fc.constant(undefined) }, { weight: percent, arbitrary: arb });
}

const validId: fc.Arbitrary<IdChoice> = fc.oneof(
  { weight: 4, arbitrary: fc.nat().map((n) => ({ kind: 'known', n }) as const) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }).map((id) => ({ kind: 'any', id }) as const) },
);

const tagChoice: fc.Arbitrary<TagChoice> = fc.oneof(
  { weight: 4, arbitrary: fc.boolean().map((weak) => ({ kind: 'current', weak }) as const) },
  {
    weight: 3,
    arbitrary: fc.record({ weak: fc.boolean(), delta: fc.integer({ min: 1, max: 3 }) }).map((t) => ({ kind: 'other', ...t }) as const),
  },
  {
    weight: 1,
    arbitrary: fc.record({ weak: fc.boolean(), zeros: fc.integer({ min: 1, max: 2 }) }).map((t) => ({ kind: 'zeros', ...t }) as const),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ weak: fc.boolean(), value: fc.constantFrom('', 'abc', 'x1', '1.0', ' 1', 'W/1') })
      .map((t) => ({ kind: 'opaque', ...t }) as const),
  },
);

function conditional(header: Conditional['header']): fc.Arbitrary<Conditional> {
  return fc.record({
    header: fc.constant(header),
    star: fc.nat({ max: 5 }).map((n) => n === 0),
    tags: fc.array(tagChoice, { minLength: 1, maxLength: 4 }),
    separator: fc.constantFrom(', ', ',', ' , ', ',\t'),
    malformed: fc.nat({ max: 7 }).map((n) => n === 0),
  });
}

/** Headers whose meaning the model knows; they are chosen per record or key when sent. */
const SPECIAL_HEADERS = ['If-Match', 'If-None-Match', 'Idempotency-Key'];

/** Keys as sent: printable ASCII that fetch sends unchanged (it trims white space at the ends). */
function idempotencyKey(s: Schema | undefined): fc.Arbitrary<string> {
  const fromSchema = s ? (valid(s) as fc.Arbitrary<string>) : fc.string({ minLength: 1 });
  return fc.oneof(
    fromSchema.map((k) => k.trim()).filter((k) => k.length > 0),
    fc.uuid(),
  );
}

/** A request that the contract admits: generated from the operation's parameter and body schemas. */
export function validPlan(op: Operation, o: PlanOptions): fc.Arbitrary<Plan> {
  const parts: fc.Arbitrary<Part>[] = [validQuery(op).map((query) => ({ query }))];
  if (hasId(op)) parts.push(validId.map((id) => ({ id })));
  const named = otherPathParams(op);
  if (named.length) {
    const values = Object.fromEntries(named.map((p) => [p.name, valid(p.schema).map(String)]));
    parts.push(fc.record(values).map((pathParams) => ({ pathParams })));
  }
  if (op.body) parts.push(valid(op.body).map((body) => ({ body })));
  if (op.body && o.uniqueFields.length) {
    const collide = fc.record({ n: fc.nat(), field: fc.constantFrom(...o.uniqueFields), upper: fc.boolean() });
    parts.push(fc.option(collide, { nil: undefined, freq: 2 }).map((c) => (c ? { collide: c } : {})));
  }
  if (queryParams(op).some((p) => p.name === 'search') && o.searchFields.length) {
    const from = fc.record({
      n: fc.nat(),
      field: fc.constantFrom(...o.searchFields),
      start: fc.nat(),
      length: fc.integer({ min: 1, max: 30 }),
      nonAscii: fc.boolean(),
    });
    parts.push(maybe(from, 20).map((s) => (s ? { searchFrom: s } : {})));
  }
  const filterParams = queryParams(op).filter((p) => o.filterFields[p.name]);
  if (filterParams.length) {
    const one = fc.record({ param: fc.constantFrom(...filterParams.map((p) => p.name)), n: fc.nat(), tweak: fc.nat({ max: 9 }) });
    parts.push(maybe(fc.array(one, { minLength: 1, maxLength: 3 }), 40).map((f) => (f ? { filterFrom: f } : {})));
  }
  if (queryParams(op).some((p) => p.name === 'cursor')) {
    const cursor = fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min: 1, max: 12 }).map((pages) => ({ kind: 'start', pages }) as const) },
      {
        weight: 2,
        arbitrary: fc
          .record({ n: fc.nat(), pageSize: maybe(fc.integer({ min: 1, max: 10 }), 50) })
          .map((r) => ({ kind: 'resume', ...r }) as const),
      },
    );
    parts.push(maybe(cursor, 35).map((c) => (c ? { cursor: c } : {})));
  }
  for (const header of ['If-Match', 'If-None-Match'] as const) {
    if (headerParam(op, header)) parts.push(maybe(conditional(header), 45).map((cond) => (cond ? { cond } : {})));
  }
  // Other headers (with no meaning the model knows): any value that fetch sends as it is.
  for (const p of op.params.filter((p) => p.in === 'header' && !SPECIAL_HEADERS.includes(p.name))) {
    // Short of Node's 16 KiB limit on all headers (over it, Node answers 431 itself).
    const value = (valid({ ...p.schema, maxLength: Math.min(p.schema.maxLength ?? 256, 256) }) as fc.Arbitrary<string>)
      .map((v) => v.replace(/[^\t\x20-\x7e\x80-\xff]/gu, '~').trim())
      .filter((v) => new RegExp(p.schema.pattern ?? '', 'u').test(v) && v.length >= (p.schema.minLength ?? 0));
    parts.push(maybe(value, 30).map((v) => (v === undefined ? {} : { headers: { [p.name]: v } })));
  }
  const keyParam = headerParam(op, 'Idempotency-Key');
  if (keyParam) {
    const idem = fc.oneof(
      { weight: 2, arbitrary: idempotencyKey(keyParam.schema).map((key) => ({ kind: 'new', key }) as const) },
      {
        weight: 2,
        arbitrary: fc
          .record({
            n: fc.nat(),
            own: fc.nat({ max: 4 }).map((k) => k > 0),
            sameBody: fc.boolean(),
            shape: fc.constantFrom<0 | 1 | 2>(0, 1, 2),
          })
          .map((r) => ({ kind: 'reuse', ...r }) as const),
      },
    );
    parts.push(maybe(idem, 45).map((i) => (i ? { idem: i } : {})));
  }
  return fc.tuple(...parts).map((ps) => {
    const headers = Object.assign({}, ...ps.map((p) => p.headers ?? {}));
    return labelled(Object.assign({ op, query: [] }, ...ps, Object.keys(headers).length ? { headers } : {}));
  });
}

/**
 * Several requests at once: creates with one new Idempotency-Key and body, or PATCHes and
 * DELETEs of one record that all send its current ETag in If-Match.
 */
export function racePlan(op: Operation): fc.Arbitrary<Plan> | undefined {
  if (op.method === 'POST' && headerParam(op, 'Idempotency-Key') && op.body) {
    return fc
      .record({ body: valid(op.body), copies: fc.integer({ min: 2, max: 4 }), key: fc.uuid() })
      .map(({ body, copies, key }) => labelled({ op, query: [], body, race: { kind: 'creates', copies, key } }));
  }
  if (headerParam(op, 'If-Match') && op.method === 'PATCH') {
    return fc
      .record({
        n: fc.nat(),
        deletes: fc.array(
          fc.nat({ max: 3 }).map((k) => k === 0),
          { minLength: 2, maxLength: 4 },
        ),
      })
      .map((race) => labelled({ op, query: [], id: { kind: 'known', n: race.n }, body: {}, race: { kind: 'writes', ...race } }));
  }
  return undefined;
}

const PLACEHOLDER = '\u0001raw\u0001';

/** The body as JSON with one field's value written as raw JSON text (numbers JSON.stringify cannot write). */
function withRaw(body: Record<string, unknown>, field: string, raw: string): string {
  return JSON.stringify({ ...body, [field]: PLACEHOLDER }).replace(JSON.stringify(PLACEHOLDER), raw);
}

function brokenBodies(op: Operation): fc.Arbitrary<Part>[] {
  const s = op.body!;
  const base = valid(s) as fc.Arbitrary<Record<string, unknown>>;
  const known = new Set(Object.keys(s.properties ?? {}));
  const out: fc.Arbitrary<Part>[] = writable(s).map(([k, p]) =>
    fc.tuple(base, broken(p)).map(([b, br]) => ({
      body: { ...b, [k]: br.value },
      raw: br.raw && withRaw(b, k, br.raw),
      broken: { status: 400, field: k, why: `${k}: ${br.why}` },
    })),
  );
  if (s.required?.length) {
    out.push(
      fc.tuple(base, fc.constantFrom(...s.required)).map(([b, k]) => ({
        body: Object.fromEntries(Object.entries(b).filter(([f]) => f !== k)),
        broken: { status: 400, field: k, why: `${k} missing` },
      })),
    );
  }
  const key = fc
    .oneof(
      fc.constantFrom('__proto__', 'constructor', 'toString', 'ID', 'Title', 'title ', 'a.b', 'a/b', '~1', '', 'colour'),
      fc.string({ maxLength: 20 }),
    )
    .filter((k) => !known.has(k));
  out.push(
    fc
      .tuple(base, key, fc.jsonValue({ maxDepth: 1 }))
      .map(([b, k, v]) => ({ body: { ...b, [k]: v }, broken: { status: 400, field: k, why: `unknown property ${JSON.stringify(k)}` } })),
  );
  out.push(
    fc
      .constantFrom<unknown>([], [{}], 'text', 42, null, true)
      .map((body) => ({ body, broken: { status: 400, field: 'body', why: `body ${JSON.stringify(body)}` } })),
  );
  out.push(
    fc
      .constantFrom('', '{', '{"a":', '{"title": "x",}', "{'a': 1}", '{"a":1}}', 'nul', '\u0000')
      .map((raw) => ({ raw, broken: { status: 400, why: `malformed JSON ${JSON.stringify(raw)}` } })),
  );
  return out;
}

function decodeOr(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return '\ufffd';
  }
}

/**
 * Query values (encoded) that break a parameter's schema. Whoever sends them keeps them well
 * short of Node's 16 KiB limit on the request line and headers (over it, Node answers 431
 * with no body before the app sees the request).
 */
function brokenValue(p: Param): fc.Arbitrary<string> {
  const s = p.schema;
  const dup = fc.constant(`x&${p.name}=y`); // the parameter twice: an array where one value is due
  if (s.type === 'integer') {
    const bounds = [s.minimum !== undefined ? String(s.minimum - 1) : '', s.maximum !== undefined ? String(s.maximum + 1) : ''].filter(
      Boolean,
    );
    return fc.oneof(fc.constantFrom(...BAD_INTEGERS, ...bounds), fc.constant(`1&${p.name}=2`));
  }
  if (s.type === 'boolean') return fc.oneof(fc.constantFrom(...BAD_BOOLEANS), fc.constant(`true&${p.name}=false`));
  if (s.type === 'array') {
    const items = (s as { items: Schema }).items;
    const admits = (v: string) => !items.enum || items.enum.includes(v);
    // Decoded and split on commas as the service reads it, the value must still be wrong.
    const stillBroken = (value: unknown[]) => {
      const parts = value.map(String).join(',').split(',');
      return parts.some((v) => !admits(v)) || (s.maxItems !== undefined && parts.length > s.maxItems) || parts.length < (s.minItems ?? 0);
    };
    const values = broken(s)
      .filter((b) => Array.isArray(b.value) && stillBroken(b.value as unknown[]))
      .map((b) => (b.value as unknown[]).map((v) => encodeLoose(String(v))).join(','));
    // Fields that cannot be sorted by, or are spelt almost right.
    const near = items.enum
      ? fc
          .constantFrom(...items.enum.flatMap((e) => [`+${e}`, `--${e}`, `${e},`, `,${e}`, `${e}%20`, `${e}%2C`]))
          .filter((v) => stillBroken([decodeOr(v)]))
      : fc.constant('');
    const odd = fc
      .constantFrom(
        '',
        '-',
        ',',
        '%2C',
        'content',
        'description',
        'price',
        'title',
        'username',
        'version',
        'password',
        'id%00',
        '%FF',
        'pk',
      )
      .filter((v) => stillBroken([decodeOr(v)]));
    return fc.oneof(values, near, odd, dup);
  }
  const max = s.maxLength ?? 1000;
  const over = max + 1;
  const tooLong = fc
    .oneof(
      text(over, over + 20),
      fc.constantFrom('a', '😀', '\u0301').map((c) => c.repeat(over)),
    )
    // Counted in NFC, as the service counts query values (docs/rules.md).
    .filter((v) => [...v.normalize('NFC')].length > max)
    .map(encodeLoose);
  const schemaBroken = broken(s)
    .filter((b) => typeof b.value === 'string' && !/^over/.test(b.why) && !(p.name === 'cursor' && b.value === ''))
    .map((b) => encodeLoose(b.value as string));
  return fc.oneof(tooLong, schemaBroken, fc.constantFrom('%FF', 'a%C3%28', '%E2%82'), dup);
}

function brokenQueries(op: Operation, ok: fc.Arbitrary<string[]>): fc.Arbitrary<Part>[] {
  return queryParams(op).map((p) =>
    fc
      .tuple(
        ok,
        brokenValue(p).filter((v) => v.length < 12_000),
      )
      .map(([query, v]) => ({
        query: [...withoutParams(query, [p.name]), `${p.name}=${v}`],
        broken: { status: 400, field: p.name, why: `${p.name}=${v}` },
      })),
  );
}

/** A lower bound above its upper bound: a 400 naming the lower one. */
function invertedRanges(op: Operation, o: PlanOptions, ok: fc.Arbitrary<string[]>): fc.Arbitrary<Part>[] {
  const find = (name: string) => queryParams(op).find((p) => p.name === name);
  const above = (a: string, b: string) => (/^[0-9.]+$/.test(a) ? Number(a) > Number(b) : a > b);
  return o.ranges
    .filter(([low, high]) => find(low) && find(high))
    .map(([low, high]) =>
      fc
        .tuple(ok, valid(find(low)!.schema), valid(find(high)!.schema))
        .map(([query, a, b]) => [query, ...(above(String(a), String(b)) ? [String(a), String(b)] : [String(b), String(a)])] as const)
        .filter(([, l, h]) => above(l, h))
        .map(([query, l, h]): Part => ({
          query: [...withoutParams(query, [low, high]), `${low}=${encodeLoose(l)}`, `${high}=${encodeLoose(h)}`],
          broken: { status: 400, field: low, why: `${low}=${l} above ${high}=${h}` },
        })),
    );
}

function brokenCursors(op: Operation, ok: fc.Arbitrary<string[]>): fc.Arbitrary<Part>[] {
  if (!queryParams(op).some((p) => p.name === 'cursor')) return [];
  const bad: fc.Arbitrary<BadCursor> = fc.oneof(
    fc
      .record({ n: fc.nat(), at: fc.nat(), how: fc.constantFrom('flip', 'cut', 'add', 'dot') })
      .map((r) => ({ kind: 'altered', ...r }) as const),
    fc.record({ n: fc.nat(), change: fc.nat() }).map((r) => ({ kind: 'otherQuery', ...r }) as const),
    fc.record({ n: fc.nat() }).map((r) => ({ kind: 'otherCollection', ...r }) as const),
    fc.record({ n: fc.nat(), page: fc.integer({ min: 1, max: 3 }) }).map((r) => ({ kind: 'withPage', ...r }) as const),
  );
  return [
    fc
      .tuple(ok, bad)
      .map(([query, badCursor]) => ({ query, badCursor, broken: { status: 400, field: 'cursor', why: `cursor ${badCursor.kind}` } })),
  ];
}

/** Header values that break a header parameter's schema, and that fetch sends as they are. */
function brokenHeaderValue(s: Schema): fc.Arbitrary<string> | undefined {
  const ways: fc.Arbitrary<string>[] = [];
  if (s.maxLength !== undefined) {
    const max = s.maxLength;
    ways.push(
      fc
        .constantFrom('"1", ', 'k', 'W/"22",', '*')
        .map((unit) => unit.repeat(Math.ceil((max + 1) / unit.length)).trim())
        .filter((v) => v.length > max),
    );
  }
  if (s.minLength) ways.push(fc.constant(''));
  if (s.pattern) {
    const re = new RegExp(s.pattern, 'u');
    const printable = fc.string({ minLength: 1, maxLength: 20 }).map((v) => v.replace(/[^\x21-\x7e]/g, 'k'));
    // Tab and Latin-1 bytes are what fetch lets through of the characters a pattern refuses.
    ways.push(
      fc
        .tuple(printable, fc.constantFrom('\t', 'é', '\u00a0', '\u00ff', '\u0080', 'ü'), printable)
        .map(([a, c, b]) => a + c + b)
        .filter((v) => !re.test(v)),
    );
  }
  return ways.length ? fc.oneof(...ways) : undefined;
}

function brokenHeaders(op: Operation): fc.Arbitrary<Part>[] {
  return op.params
    .filter((p) => p.in === 'header' && brokenHeaderValue(p.schema))
    .map((p) =>
      brokenHeaderValue(p.schema)!.map((v): Part => ({
        headers: { [p.name]: v },
        broken: {
          status: 400,
          field: p.name,
          why: `${p.name}: ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...(${v.length})` : v)}`,
        },
      })),
    );
}

/** A request broken in one way: the contract's answer is a 4xx problem naming what is wrong. */
export function brokenPlan(op: Operation, o: PlanOptions): fc.Arbitrary<Plan> | undefined {
  // The rest of the query is valid and free of other problems that are not the schema's (a
  // cursor, a range): one problem at a time, so that the answer must name it.
  const ok = validQuery(op, ['cursor', ...o.ranges.flat()]);
  const ways: fc.Arbitrary<Part>[] = [
    ...brokenQueries(op, ok),
    ...invertedRanges(op, o, ok),
    ...brokenCursors(op, ok),
    ...brokenHeaders(op),
  ];
  if (op.body) ways.push(...brokenBodies(op));
  if (hasId(op))
    ways.push(fc.constantFrom(...ODD_IDS).map((raw): Part => ({ id: { kind: 'odd', raw }, broken: { status: 404, why: `id ${raw}` } })));
  // A value that the parameter's enum does not hold names nothing: 404, as an odd id does.
  const enumerated = otherPathParams(op).filter((p) => p.schema.enum);
  for (const p of enumerated) {
    const others = fc
      .oneof(fc.constantFrom('', 'x', 'UNIQUE', 'about:blank', '%2F', 'Validation'), fc.stringMatching(/^[a-z-]{1,30}$/))
      .filter((v) => !p.schema.enum!.includes(v));
    ways.push(
      fc
        .tuple(fc.record(Object.fromEntries(enumerated.map((q) => [q.name, fc.constantFrom(...q.schema.enum!.map(String))]))), others)
        .map(([ok, raw]): Part => ({ pathParams: { ...ok, [p.name]: raw }, broken: { status: 404, why: `${p.name} ${raw}` } })),
    );
  }
  if (!ways.length) return undefined;
  // A broken body or query goes to a record that exists, so that "changes nothing" is tested.
  // A broken create may carry a new Idempotency-Key: a failed create is not remembered.
  const key = headerParam(op, 'Idempotency-Key');
  const defaults = fc.record({
    query: ok,
    id: fc.nat().map((n): IdChoice => ({ kind: 'known', n })),
    body: op.body ? valid(op.body) : fc.constant(undefined),
    idem: key
      ? maybe(
          fc.uuid().map((k): IdemChoice => ({ kind: 'new', key: k })),
          30,
        )
      : fc.constant(undefined),
  });
  return fc.tuple(defaults, fc.oneof(...ways)).map(([d, part]) => labelled({ op, ...d, ...part }));
}

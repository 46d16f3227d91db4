import fc from 'fast-check';
import { broken, text, valid } from './arbitraries';
import type { Operation, Schema } from './spec';

/**
 * One request to send, drawn from an operation's schemas: valid, or broken on purpose in one
 * named way. Choices that depend on what the database holds (which record, which value to
 * collide with) are kept abstract here and made when the request is sent.
 */
export type IdChoice = { kind: 'known'; n: number } | { kind: 'any'; id: number } | { kind: 'odd'; raw: string };

export interface Plan {
  op: Operation;
  id?: IdChoice;
  /** Encoded `name=value` pairs. */
  query: string[];
  body?: unknown;
  /** Body text to send as is, instead of `body` as JSON. */
  raw?: string;
  /** Broken on purpose: the status it must get and the field the problem must name. */
  broken?: { status: 400 | 404; field?: string; why: string };
  /** Give this unique field the value that the n-th known record has (upper-cased, maybe). */
  collide?: { n: number; field: string; upper: boolean };
  /** Search for a piece of what the n-th known record holds in this search field (maybe starting at a non-ASCII character). */
  searchFrom?: { n: number; field: string; start: number; length: number; nonAscii: boolean };
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
}

// Path ids that are not positive integers (or are too large to be one): the contract's 404.
const ODD_IDS = ['0', '-1', '1.5', 'abc', '0x1', '1e3', '+1', '%201', '1%20', '9007199254740992', '99999999999999999999', '%00', '1%00', '%ED%A0%80', '%FF', '%', '%zz', '1%2F2', '%EF%BC%91', 'null', '[]'];
// Query integers that are not plain decimal digits within the bounds.
const BAD_INTEGERS = ['0', '-1', '1.5', 'abc', '0x10', '1e1', '', '%201', '+1', '9007199254740992', '99999999999999999999', '%00', '1%00', '%ED%A0%80', '%FF', '%EF%BC%91', 'true', '[]'];

/** Percent-encodes text, unpaired surrogates included (as the WTF-8 bytes no UTF-8 decoder takes). */
export function encodeLoose(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    if (pair) out += encodeURIComponent(s.slice(i, ++i + 1));
    else if (c >= 0xd800 && c <= 0xdfff) out += Buffer.from([0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)]).toString('hex').replace(/../g, '%$&').toUpperCase();
    else out += encodeURIComponent(s[i]);
  }
  return out;
}

const queryParams = (op: Operation) => op.params.filter((p) => p.in === 'query');
const hasId = (op: Operation) => op.params.some((p) => p.in === 'path');
const writable = (s: Schema) => Object.entries(s.properties ?? {}).filter(([, p]) => !(p as Schema).readOnly) as [string, Schema][];

function validQuery(op: Operation): fc.Arbitrary<string[]> {
  const pairs = queryParams(op).map((p) => fc.option(valid(p.schema).map((v) => `${p.name}=${encodeURIComponent(String(v))}`), { nil: undefined }));
  return fc.tuple(...pairs).map((all) => all.filter((q): q is string => q !== undefined));
}

const validId: fc.Arbitrary<IdChoice> = fc.oneof(
  { weight: 4, arbitrary: fc.nat().map((n) => ({ kind: 'known', n }) as const) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }).map((id) => ({ kind: 'any', id }) as const) },
);

/** A request that the contract admits: generated from the operation's parameter and body schemas. */
export function validPlan(op: Operation, o: PlanOptions): fc.Arbitrary<Plan> {
  const parts: fc.Arbitrary<Part>[] = [validQuery(op).map((query) => ({ query }))];
  if (hasId(op)) parts.push(validId.map((id) => ({ id })));
  if (op.body) parts.push(valid(op.body).map((body) => ({ body })));
  if (op.body && o.uniqueFields.length) {
    const collide = fc.record({ n: fc.nat(), field: fc.constantFrom(...o.uniqueFields), upper: fc.boolean() });
    parts.push(fc.option(collide, { nil: undefined, freq: 2 }).map((c) => (c ? { collide: c } : {})));
  }
  if (queryParams(op).some((p) => p.name === 'search') && o.searchFields.length) {
    const from = fc.record({ n: fc.nat(), field: fc.constantFrom(...o.searchFields), start: fc.nat(), length: fc.integer({ min: 1, max: 30 }), nonAscii: fc.boolean() });
    parts.push(fc.option(from, { nil: undefined, freq: 3 }).map((s) => (s ? { searchFrom: s } : {})));
  }
  return fc.tuple(...parts).map((ps) => labelled(Object.assign({ op, query: [] }, ...ps)));
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
    fc.tuple(base, broken(p)).map(([b, br]) => ({ body: { ...b, [k]: br.value }, raw: br.raw && withRaw(b, k, br.raw), broken: { status: 400, field: k, why: `${k}: ${br.why}` } })),
  );
  if (s.required?.length) {
    out.push(fc.tuple(base, fc.constantFrom(...s.required)).map(([b, k]) => ({ body: Object.fromEntries(Object.entries(b).filter(([f]) => f !== k)), broken: { status: 400, field: k, why: `${k} missing` } })));
  }
  const key = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'ID', 'Title', 'title ', 'a.b', 'a/b', '~1', '', 'colour'), fc.string({ maxLength: 20 })).filter((k) => !known.has(k));
  out.push(fc.tuple(base, key, fc.jsonValue({ maxDepth: 1 })).map(([b, k, v]) => ({ body: { ...b, [k]: v }, broken: { status: 400, field: k, why: `unknown property ${JSON.stringify(k)}` } })));
  out.push(fc.constantFrom<unknown>([], [{}], 'text', 42, null, true).map((body) => ({ body, broken: { status: 400, field: 'body', why: `body ${JSON.stringify(body)}` } })));
  out.push(fc.constantFrom('', '{', '{"a":', '{"title": "x",}', "{'a': 1}", '{"a":1}}', 'nul', '\u0000').map((raw) => ({ raw, broken: { status: 400, why: `malformed JSON ${JSON.stringify(raw)}` } })));
  return out;
}

function brokenQueries(op: Operation, ok: fc.Arbitrary<string[]>): fc.Arbitrary<Part>[] {
  return queryParams(op).map((p) => {
    const s = p.schema;
    let bad: fc.Arbitrary<string>;
    if (s.type === 'integer') {
      const bounds = [s.minimum !== undefined ? String(s.minimum - 1) : '', s.maximum !== undefined ? String(s.maximum + 1) : ''].filter(Boolean);
      bad = fc.oneof(fc.constantFrom(...BAD_INTEGERS, ...bounds), fc.constant(`1&${p.name}=2`));
    } else {
      const over = (s.maxLength ?? 1000) + 1;
      const tooLong = fc.oneof(text(over, over + 20), fc.constantFrom('a', '😀', '\u0301').map((c) => c.repeat(over))).map(encodeLoose);
      const badText = broken({ type: 'string', maxLength: s.maxLength } as Schema).filter((b) => typeof b.value === 'string' && !/^over/.test(b.why)).map((b) => encodeLoose(b.value as string));
      bad = fc.oneof(tooLong, badText, fc.constantFrom('%FF', 'a%C3%28', '%E2%82', `x&${p.name}=y`));
    }
    return fc.tuple(ok, bad).map(([query, v]) => ({
      query: [...query.filter((q) => !q.startsWith(`${p.name}=`)), `${p.name}=${v}`],
      broken: { status: 400, field: p.name, why: `${p.name}=${v}` },
    }));
  });
}

/** A request broken in one way: the contract's answer is a 4xx problem naming what is wrong. */
export function brokenPlan(op: Operation): fc.Arbitrary<Plan> | undefined {
  const ok = validQuery(op);
  const ways: fc.Arbitrary<Part>[] = [...brokenQueries(op, ok)];
  if (op.body) ways.push(...brokenBodies(op));
  if (hasId(op)) ways.push(fc.constantFrom(...ODD_IDS).map((raw) => ({ id: { kind: 'odd', raw } as IdChoice, broken: { status: 404, why: `id ${raw}` } })));
  if (!ways.length) return undefined;
  // A broken body or query goes to a record that exists, so that "changes nothing" is tested.
  const defaults = fc.record({ query: ok, id: fc.nat().map((n) => ({ kind: 'known', n }) as IdChoice), body: op.body ? valid(op.body) : fc.constant(undefined) });
  return fc.tuple(defaults, fc.oneof(...ways)).map(([d, part]) => labelled({ op, ...d, ...part } as Plan));
}

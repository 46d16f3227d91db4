import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { isSetByService } from '../../../src/spec';
import type { Schema } from './spec';

/**
 * Values from the spec's schemas: `valid` ones that the schema admits, and `broken` ones that
 * break it in a named way. The one rule that no schema states is the spec's text rule: strings
 * are well-formed Unicode without U+0000, so valid text never holds those.
 */

const ajv = addFormats(new Ajv({ strict: false, allErrors: true }), { mode: 'full' });
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

const codePoints = (s: string) => [...s].length;

// Characters that have tripped text handling before: search syntax and LIKE wildcards, case
// folding that depends on context or changes length, combining marks, invisible characters,
// characters outside the BMP, and byte sequences that some layers treat specially.
const SPECIAL = [
  '%',
  '_',
  '\\',
  '"',
  "'",
  ',',
  ' ',
  '\t',
  '\n',
  '\r',
  '+',
  '&',
  '=',
  '?',
  '#',
  '/',
  '<',
  'é',
  'É',
  'Σ',
  'ς',
  'İ',
  'ı',
  'ẞ',
  'ß',
  'ǅ',
  'K',
  'Ω',
  'ﬁ',
  '\u0301',
  '\u200b',
  '\u200d',
  '\ufeff',
  '\ufffd',
  '\u2028',
  '\u00a0',
  '\u3000',
  '\u0085',
  '\u007f',
  '😀',
  '🏽',
  '𐐀',
  '𐐨',
  '\u{10ffff}',
  '\u{e0041}',
];

const codePoint = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCodePoint(c)) },
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL) },
  // Letters whose lower case depends on their neighbours or changes length.
  { weight: 1, arbitrary: fc.constantFrom('Σ', 'İ', 'ẞ', 'ǅ') },
  {
    weight: 2,
    arbitrary: fc
      .integer({ min: 1, max: 0x10ffff })
      .filter((c) => c < 0xd800 || c > 0xdfff)
      .map((c) => String.fromCodePoint(c)),
  },
);

/** Text of `min` to `max` code points, often exactly `max` (where length bugs live). */
export function text(min: number, max?: number): fc.Arbitrary<string> {
  const upTo = (n: number) => fc.array(codePoint, { minLength: min, maxLength: n }).map((a) => a.join(''));
  if (max === undefined) {
    // Unbounded text: mostly short, sometimes tens of thousands of characters.
    const long = fc
      .tuple(upTo(Math.max(min, 40)), fc.integer({ min: 1000, max: 40000 }))
      .map(([s, n]) => (s ? s.repeat(Math.ceil(n / codePoints(s))) : s));
    return fc.oneof({ weight: 8, arbitrary: upTo(300) }, { weight: 1, arbitrary: long });
  }
  const exact = fc.array(codePoint, { minLength: max, maxLength: max }).map((a) => a.join(''));
  return fc.oneof({ weight: 4, arbitrary: upTo(max) }, { weight: 1, arbitrary: exact });
}

/** Integers, biased to the low end and the bounds (pages, sizes and ids live there). */
export function integer(min = -MAX_SAFE, max = MAX_SAFE): fc.Arbitrary<number> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min, max: Math.min(max, min + 4) }) },
    { weight: 1, arbitrary: fc.constantFrom(min, max) },
    { weight: 2, arbitrary: fc.bigInt(BigInt(min), BigInt(max)).map(Number) },
  );
}

function string(s: Schema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  // Lengths count the NFC form, which the service stores (docs/rules.md): composing can shorten
  // a text and a few characters (U+1D1BF, say) decompose into longer ones.
  const fits = (v: string) => {
    const n = codePoints(v.normalize('NFC'));
    return n >= min && (s.maxLength === undefined || n <= s.maxLength);
  };
  if (s.format === 'date') {
    const date = fc.date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true });
    return date.map((d) => d.toISOString().slice(0, 10));
  }
  if (s.format === 'email') {
    const check = ajv.compile({ type: 'string', format: 'email' });
    return fc.emailAddress().filter((v) => fits(v) && check(v));
  }
  if (s.pattern) return fc.stringMatching(new RegExp(s.pattern, 'u')).filter(fits);
  return text(min, s.maxLength).filter(fits);
}

/** A value that `s` admits. */
export function valid(s: Schema): fc.Arbitrary<unknown> {
  // Sent, typed as in a record, and ignored.
  if (isSetByService(s) && s.format === 'date-time')
    return fc
      .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2999-12-31T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString());
  let arb: fc.Arbitrary<unknown>;
  if (s.enum) arb = fc.constantFrom(...s.enum);
  else if (s.type === 'string') arb = string(s);
  else if (s.type === 'integer') arb = integer(s.minimum, s.maximum);
  else if (s.type === 'boolean') arb = fc.boolean();
  else if (s.type === 'array') arb = array(s);
  else if (s.type === 'object') arb = object(s);
  else throw new Error(`the fuzzer has no generator for ${JSON.stringify(s)}`);
  return s.nullable ? fc.option(arb, { nil: null, freq: 4 }) : arb;
}

/** Arrays of valid items; an array without maxItems stays short. */
function array(s: Schema): fc.Arbitrary<unknown[]> {
  const items = (s as { items: Schema }).items;
  const min = s.minItems ?? 0;
  return fc.array(valid(items), { minLength: min, maxLength: s.maxItems ?? min + 3, size: 'xsmall' });
}

function object(s: Schema): fc.Arbitrary<Record<string, unknown>> {
  const props = Object.entries(s.properties ?? {}) as [string, Schema][];
  return fc.record(Object.fromEntries(props.map(([k, p]) => [k, valid(p)])), { requiredKeys: s.required ?? [] });
}

/** A value for a field that breaks its schema, and why. `raw` is JSON text to send as is. */
export interface Broken {
  value: unknown;
  why: string;
  raw?: string;
}

const HUGE = ['1e400', '-1e400', '123456789012345678901234567890', '9007199254740993'];

/** Values of another JSON type than `s` takes (null too, unless `s` is nullable). */
function wrongType(s: Schema): fc.Arbitrary<Broken> {
  const others: unknown[] = [{}, { a: 1 }, 'true', 0, 1.5, -7, '1', ''];
  if (s.type !== 'boolean') others.push(true, false);
  if (s.type !== 'array') others.push([], ['x']);
  if (!s.nullable) others.push(null);
  const typeOf = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v);
  const wrong = others.filter((v) => typeOf(v) !== s.type && !(s.type === 'number' && typeof v === 'number'));
  return fc.constantFrom(...wrong).map((value) => ({ value, why: `wrong type ${JSON.stringify(value)}` }));
}

/** Values of the right type that break a bound, a pattern, an enum or a format of `s`. */
function outOfBounds(s: Schema): fc.Arbitrary<Broken>[] {
  const out: fc.Arbitrary<Broken>[] = [];
  const of = (why: string, arb: fc.Arbitrary<unknown>) => out.push(arb.map((value) => ({ value, why })));
  if (s.type === 'string') {
    if (s.maxLength !== undefined) {
      const over = s.maxLength + 1;
      const max = s.maxLength;
      of(
        'over maxLength',
        fc
          .oneof(
            text(over, over + 30),
            fc.constantFrom('a', '😀', 'é', '\u0301').map((c) => c.repeat(over)),
          )
          // Counted in NFC, as the service counts (docs/rules.md): composing can bring it back under.
          .filter((v) => codePoints(v.normalize('NFC')) > max),
      );
    }
    if (s.minLength) of('under minLength', fc.constant(''));
    if (s.pattern) {
      const re = new RegExp(s.pattern, 'u');
      of(
        'not matching the pattern',
        fc.oneof(text(0, 20), fc.constantFrom(' ', '1 ', '١٢٣', '１２')).filter((v) => !re.test(v)),
      );
    }
    if (s.enum)
      of(
        'not in the enum',
        fc
          .oneof(fc.constantFrom(...s.enum.flatMap((e) => [String(e).toUpperCase(), ` ${e}`, `${e}\n`])), text(0, 10))
          .filter((v) => !s.enum!.includes(v)),
      );
    if (s.format === 'date')
      of(
        'not a date',
        fc.constantFrom(
          '2026-02-30',
          '2026-13-01',
          '2025-02-29',
          '0999-12-31',
          '2026-1-01',
          '2026-01-01T00:00:00Z',
          '20260101',
          ' 2026-01-01',
          '２０２６-01-01',
        ),
      );
    if (s.format === 'email')
      of(
        'not an email',
        fc.constantFrom('no-at', 'a@', '@b.example', 'a b@c.example', 'a@b', 'é@b.example', `${'a'.repeat(250)}@b.example`),
      );
  }
  if (s.type === 'integer') {
    // Built only for a bound the schema has: fc.constantFrom() of nothing throws.
    if (s.minimum !== undefined) of('under minimum', fc.constantFrom(s.minimum - 1, -MAX_SAFE));
    if (s.maximum !== undefined) of('over maximum', fc.constantFrom(s.maximum + 1, 2 ** 53));
    out.push(
      fc
        .constantFrom(...HUGE)
        .map((raw) => ({ value: Number(raw), why: `huge number ${raw}`, raw }))
        .filter((b) => !Number.isSafeInteger(b.value) || b.value > (s.maximum ?? MAX_SAFE)),
    );
  }
  if (s.type === 'array') {
    const items = (s as { items: Schema }).items;
    const ok = valid(items);
    const min = s.minItems ?? 0;
    if (s.maxItems !== undefined) of('over maxItems', fc.array(ok, { minLength: s.maxItems + 1, maxLength: s.maxItems + 3 }));
    if (min > 0) of('under minItems', fc.constant([]));
    const bad = broken(items).filter((b) => b.raw === undefined);
    out.push(
      fc.tuple(fc.array(ok, { maxLength: Math.max(0, (s.maxItems ?? 4) - 1) }), bad, fc.nat()).map(([list, b, at]) => {
        const value = [...list];
        value.splice(at % (value.length + 1), 0, b.value);
        return { value, why: `an item ${b.why}` };
      }),
    );
  }
  return out;
}

/** A valid string of `s` with a NUL character or an unpaired surrogate put in. */
function badCharacter(s: Schema): fc.Arbitrary<Broken> {
  return fc
    .tuple(
      string({ ...s, pattern: undefined, format: undefined, enum: undefined }),
      fc.constantFrom('\u0000', '\ud800', '\udfff', '\udc00\ud800'),
      fc.nat(),
    )
    .map(([base, bad, at]) => {
      const chars = [...base];
      chars.splice(at % (chars.length + 1), 0, bad);
      return { value: chars.join(''), why: `holds ${JSON.stringify(bad)}` };
    });
}

/** Every way the fuzzer knows to break a value of `s`. */
export function broken(s: Schema): fc.Arbitrary<Broken> {
  const ways = [wrongType(s), ...outOfBounds(s)];
  if (s.type === 'string' && !s.enum) ways.push(badCharacter(s));
  return fc.oneof(...ways);
}

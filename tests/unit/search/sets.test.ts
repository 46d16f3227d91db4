import fc from 'fast-check';
import { RoaringBitmap32 } from 'roaring';
import { searchFold } from '../../../src/search/fold';
import { gramsOf, KeyGatherer, WORD, wordPieces } from '../../../src/search/sets/keys';
import { planTerms, type SetReader } from '../../../src/search/sets/plan';
import { Vocabulary } from '../../../src/search/sets/vocabulary';

/** An index of sets in memory, as a storage adapter would hold it. */
function memoryIndex(records: readonly string[][], pairable: ReadonlySet<string>): SetReader {
  const gatherer = new KeyGatherer((w) => pairable.has(w));
  records.forEach((fields, i) => gatherer.add(i + 1, fields.map(searchFold)));
  const sets = new Map<string, RoaringBitmap32>();
  for (const [key, ids] of gatherer.drain()) sets.set(key, RoaringBitmap32.from(ids));
  const get = (k: string) => sets.get(k) ?? new RoaringBitmap32();
  return {
    union: (keys) => Promise.resolve(RoaringBitmap32.orMany(keys.map(get))),
    unionPrefixed: (prefixes) =>
      Promise.resolve(RoaringBitmap32.orMany([...sets].filter(([k]) => prefixes.some((p) => k.startsWith(p))).map(([, s]) => s))),
    vocabulary: () => Promise.resolve(Vocabulary.of([...sets.keys()].filter((k) => k.startsWith(WORD)).map((k) => k.slice(1)))),
    pairable: () => Promise.resolve(pairable),
  };
}

/** The scan's predicate: every term a substring of some field's fold. */
function matches(records: readonly string[][], terms: readonly string[]): number[] {
  const out: number[] = [];
  records.forEach((fields, i) => {
    if (terms.every((t) => fields.some((f) => searchFold(f).includes(t)))) out.push(i + 1);
  });
  return out;
}

// Letters of several alphabets and cases, marks, digits, separators and characters past U+FFFF.
const CHARS = [...'abcdeéEÉßİıΣσς  ,.-\'"0129\u0301\t', '𝒜', '😀', '\uD800'];
const text = fc.array(fc.constantFrom(...CHARS), { maxLength: 40 }).map((cs) => cs.join(''));
const records = fc.array(fc.tuple(text, text), { minLength: 1, maxLength: 25 });

/** A term cut from a record at random places, in random case, 1 to 6 characters. */
function cutTerm(rs: string[][], pick: number, at: number, length: number, upper: boolean): string | undefined {
  const field = rs[pick % rs.length][at % 2];
  const chars = [...field];
  if (!chars.length) return undefined;
  const start = at % chars.length;
  const term = chars.slice(start, start + 1 + (length % 6)).join('');
  return searchFold(upper ? term.toUpperCase() : term);
}

describe('the index of sets', () => {
  test('every match of the scan is a candidate, and every sure match is one of the scan', async () => {
    await fc.assert(
      fc.asyncProperty(
        records,
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat(), fc.boolean()), { minLength: 1, maxLength: 2 }),
        fc.nat(),
        async (rs, cuts, pairSeed) => {
          const terms = cuts.map(([p, a, l, u]) => cutTerm(rs, p, a, l, u)).filter((t): t is string => !!t?.trim());
          if (!terms.length) return;
          const words = [...new Set(rs.flat().flatMap((f) => searchFold(f).match(/[\p{L}\p{M}\p{N}]+/gu) ?? []))];
          const pairable = new Set(words.filter((_, i) => (pairSeed >> (i % 30)) & 1));
          const plan = await planTerms(memoryIndex(rs, pairable), terms);
          const truth = RoaringBitmap32.from(matches(rs, terms));
          expect(RoaringBitmap32.andNot(plan.sure, truth).toArray()).toEqual([]);
          expect(RoaringBitmap32.andNot(truth, plan.candidates).toArray()).toEqual([]);
        },
      ),
      { numRuns: 400 },
    );
  });

  test('a term of up to three characters, or inside one word, is decided without a row', async () => {
    await fc.assert(
      fc.asyncProperty(records, fc.nat(), fc.nat(), fc.nat(), fc.boolean(), async (rs, p, a, l, u) => {
        const term = cutTerm(rs, p, a, l, u);
        if (!term?.trim() || ([...term].length > 3 && /[^\p{L}\p{M}\p{N}]/u.test(term))) return;
        const plan = await planTerms(memoryIndex(rs, new Set()), [term]);
        expect(plan.sure.toArray()).toEqual(matches(rs, [term]));
        expect(plan.candidates.toArray()).toEqual(plan.sure.toArray());
      }),
      { numRuns: 400 },
    );
  });

  test('a phrase of two pairable words is decided by their pair', async () => {
    const rs = [['and the cat'], ['band theory'], ['and  the'], ['the and'], ['and, the']];
    const plan = await planTerms(memoryIndex(rs, new Set(['and', 'the', 'band', 'theory'])), ['and the']);
    expect(plan.sure.toArray()).toEqual([1, 2]);
    expect(plan.candidates.toArray()).toEqual([1, 2]);
  });

  test('a phrase with a word that is not pairable leaves its records to the check', async () => {
    const rs = [['and the cat'], ['band theory'], ['hand them']];
    const plan = await planTerms(memoryIndex(rs, new Set(['and', 'the'])), ['and the']);
    expect(plan.sure.toArray()).toEqual([1]);
    expect(plan.candidates.toArray()).toEqual([1, 2, 3]);
  });

  test('grams are cut by character, past U+FFFF too', () => {
    expect([...gramsOf('a𝒜b')].sort()).toEqual(['a', 'a𝒜', 'a𝒜b', 'b', '𝒜', '𝒜b'].sort());
  });

  test('a long word is kept as pieces that overlap, so any term of 200 characters lies in one', () => {
    const word = 'x'.repeat(300) + 'y'.repeat(300) + 'z'.repeat(150);
    const pieces = wordPieces(word);
    expect(pieces.length).toBeGreaterThan(1);
    for (let at = 0; at + 200 <= word.length; at += 37) expect(pieces.some((p) => p.includes(word.slice(at, at + 200)))).toBe(true);
  });

  // The gram lists only narrow which words are tested: whatever the fragment (shorter than a
  // gram, past U+FFFF, absent) and however the vocabulary grew, the answer is the full scan's.
  test('the vocabulary finds the words holding a fragment as a scan of every word does', () => {
    const letters = fc.constantFrom('a', 'b', 'é', 'e\u0301', '𝒜', 'ab', 'ba');
    const word = fc.array(letters, { minLength: 1, maxLength: 8 }).map((p) => p.join(''));
    fc.assert(
      fc.property(
        fc.array(fc.array(word, { maxLength: 20 }), { minLength: 1, maxLength: 4 }),
        word,
        fc.nat(3),
        (growths, fragment, cut) => {
          let vocabulary = Vocabulary.of([]);
          const versions: Vocabulary[] = [];
          for (const more of growths) versions.push((vocabulary = vocabulary.with(more)));
          const part = [...fragment].slice(0, cut + 1).join('');
          // Older versions asked after newer ones had listed their words.
          for (const v of [...versions].reverse()) {
            expect(v.holding(part)).toEqual(v.words.filter((w) => w.includes(part)));
            expect(v.holding(part, (w) => w.endsWith(part))).toEqual(v.words.filter((w) => w.endsWith(part)));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

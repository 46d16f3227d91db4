// From search terms to sets of ids: which records surely match and which must still be checked
// with the scan's predicate. Pure but for the reader, which a storage adapter implements.
import { RoaringBitmap32 } from 'roaring';
import { GRAM, MAX_GRAM, pairKey, WORD, WORD_BREAK } from './keys';
import type { Vocabulary } from './vocabulary';

/** What the planner reads of an index of sets (one table's). */
export interface SetReader {
  /** The union of the sets of these keys (none: the empty set). */
  union(keys: readonly string[]): Promise<RoaringBitmap32>;
  /** The union of the sets whose keys start with any of these prefixes. */
  unionPrefixed(prefixes: readonly string[]): Promise<RoaringBitmap32>;
  /** Every word (or piece of a long word) that has a set. */
  vocabulary(): Promise<Vocabulary>;
  /** The words whose adjacent pairs have sets of their own. */
  pairable(): Promise<ReadonlySet<string>>;
}

/** A search's ids from the index: `sure` match; the rest of `candidates` may, and are checked. */
export interface TermSets {
  sure: RoaringBitmap32;
  candidates: RoaringBitmap32;
}

const WORD_RUNS = /[\p{L}\p{M}\p{N}]+|[^\p{L}\p{M}\p{N}]+/gu;

/** The records that hold every (folded) term, as far as the index can tell without a row. */
export async function planTerms(reader: SetReader, terms: readonly string[]): Promise<TermSets> {
  let plan: TermSets | undefined;
  for (const term of terms) {
    const one = await planTerm(reader, term);
    plan = plan
      ? { sure: RoaringBitmap32.and(plan.sure, one.sure), candidates: RoaringBitmap32.and(plan.candidates, one.candidates) }
      : one;
    if (plan.candidates.isEmpty) break;
  }
  return plan ?? { sure: new RoaringBitmap32(), candidates: new RoaringBitmap32() };
}

async function planTerm(reader: SetReader, term: string): Promise<TermSets> {
  const chars = [...term];
  if (chars.length <= MAX_GRAM) return exact(await reader.union([GRAM + term]));
  const words = await reader.vocabulary();
  // Inside one word: the union of the words that hold it.
  if (!WORD_BREAK.test(term)) return exact(await reader.union(words.holding(term).map((w) => WORD + w)));

  // Across words: every gram of it is a condition.
  const conditions: RoaringBitmap32[] = [];
  const grams = new Set<string>();
  for (let i = 0; i + MAX_GRAM <= chars.length; i++) grams.add(chars.slice(i, i + MAX_GRAM).join(''));
  for (const gram of grams) conditions.push(await reader.union([GRAM + gram]));
  const runs = term.match(WORD_RUNS) ?? [];
  const isWord = (run: string) => !WORD_BREAK.test(run);

  // A word's end, what separates, a word's start: the pairs of pairable words count it exactly.
  // The rest hold such a pair with a word that is not pairable. Each word's set is read once:
  // the commonest (pairable) words' sets are the largest.
  if (runs.length === 3 && isWord(runs[0]) && isWord(runs[2])) {
    const pairable = await reader.pairable();
    const [head, between, tail] = runs;
    const firsts = [...pairable].filter((w) => w.endsWith(head));
    const sure = await reader.unionPrefixed(firsts.map((w) => pairKey(w, between, tail)));
    const union = (ws: readonly string[]) => reader.union(ws.map((w) => WORD + w));
    const [firstPaired, firstUnpaired, secondPaired, secondUnpaired] = await Promise.all([
      union(firsts),
      union(words.holding(head, (w) => w.endsWith(head) && !pairable.has(w))),
      union([...pairable].filter((w) => w.startsWith(tail))),
      union(words.holding(tail, (w) => w.startsWith(tail) && !pairable.has(w))),
    ]);
    const anyFirst = RoaringBitmap32.or(firstPaired, firstUnpaired);
    const anySecond = RoaringBitmap32.or(secondPaired, secondUnpaired);
    conditions.push(RoaringBitmap32.or(RoaringBitmap32.and(firstUnpaired, anySecond), RoaringBitmap32.and(anyFirst, secondUnpaired)));
    return { sure, candidates: RoaringBitmap32.or(sure, intersect(conditions)) };
  }

  // Else each word run is a condition too.
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i];
    if (!isWord(run)) continue;
    const first = i === 0;
    const last = i === runs.length - 1;
    const holding = words.holding(run, (w) => (first && last ? true : first ? w.endsWith(run) : last ? w.startsWith(run) : w === run));
    conditions.push(await reader.union(holding.map((w) => WORD + w)));
  }
  const candidates = intersect(conditions);
  return { sure: new RoaringBitmap32(), candidates };
}

function exact(ids: RoaringBitmap32): TermSets {
  return { sure: ids, candidates: ids };
}

function intersect(sets: RoaringBitmap32[]): RoaringBitmap32 {
  sets.sort((a, b) => a.size - b.size);
  let out = sets[0];
  for (let i = 1; i < sets.length && !out.isEmpty; i++) out = RoaringBitmap32.and(out, sets[i]);
  return out;
}

import { type Db, perPool } from '../../db/connection';
import { searchFold } from '../fold';
import type { SearchTuning } from '../tuning';

// FTS5 reads the whole posting list of every trigram in a phrase, so a long term of common
// trigrams is slow though it matches few rows: its three rarest trigrams give a few candidates,
// which the scan's predicate then decides. A stale sample of rarity costs time, never a result.

/** Trigrams that narrow a long term. */
const NARROWING = 3;
/** Rows sampled per table, at random ids, and how long a sample is used. */
const SAMPLE_ROWS = 500;
const SAMPLE_TTL_MS = 10 * 60_000;

interface Sample {
  /** Sampled rows holding each trigram of their (folded) search fields. */
  counts: Map<string, number>;
  /** Each sampled row's folded search fields. */
  texts: string[][];
  rows: number;
}

/** Per pool (its config) and table. A failed sampling is not kept. */
const samples = new WeakMap<object, Map<string, Promise<Sample>>>();

/** The distinct trigrams of a folded term, in order. */
export function trigramsOf(folded: string): string[] {
  const chars = [...folded];
  return [...new Set(chars.slice(2).map((_, i) => chars.slice(i, i + 3).join('')))];
}

/** At most `n` of `xs`, the first and the last among them, the rest evenly between. */
export function spread<T>(xs: readonly T[], n: number): T[] {
  if (xs.length <= n) return [...xs];
  return Array.from({ length: n }, (_, i) => xs[Math.round((i * (xs.length - 1)) / (n - 1))]);
}

async function takeSample(db: Db, table: string, fields: readonly string[]): Promise<Sample> {
  const [{ low, high }] = await db(table).min({ low: 'id' }).max({ high: 'id' });
  const counts = new Map<string, number>();
  if (low === null || high === null) return { counts, texts: [], rows: 0 };
  const span = Number(high) - Number(low) + 1;
  const ids = [...new Set(Array.from({ length: Math.min(SAMPLE_ROWS, span) }, () => Number(low) + Math.floor(Math.random() * span)))];
  const rows = (await db(table)
    .select(...fields)
    .whereIn('id', ids)) as Record<string, unknown>[];
  const texts = rows.map((row) => fields.flatMap((f) => (typeof row[f] === 'string' ? [searchFold(row[f])] : [])));
  for (const folded of texts) {
    const seen = new Set(folded.flatMap(trigramsOf));
    for (const t of seen) counts.set(t, (counts.get(t) ?? 0) + 1);
  }
  return { counts, texts, rows: rows.length };
}

function sampleOf(db: Db, table: string, fields: readonly string[]): Promise<Sample> {
  const tables = perPool(samples, db, () => new Map<string, Promise<Sample>>());
  let found = tables.get(table);
  if (!found) {
    found = takeSample(db, table, fields);
    found.catch(() => tables.delete(table));
    tables.set(table, found);
    found.then(
      () => setTimeout(() => tables.delete(table), SAMPLE_TTL_MS).unref(),
      () => {},
    );
  }
  return found;
}

/**
 * Each folded term's trigrams, rarest first in the table's sample, and the share of the sampled
 * rows holding the rarest trigram of any term: at most about this share of the rows match.
 */
export async function rankTrigrams(
  db: Db,
  spec: { table: string; searchFields: readonly string[] },
  folded: readonly string[],
): Promise<{ ranked: string[][]; share: number }> {
  const { counts, rows } = await sampleOf(db, spec.table, spec.searchFields);
  const rarity = (t: string) => counts.get(t) ?? 0;
  const ranked = folded.map((f) => trigramsOf(f).sort((a, b) => rarity(a) - rarity(b)));
  return { ranked, share: rows ? Math.min(...ranked.map((grams) => rarity(grams[0]) / rows)) : 1 };
}

/** The largest share of the sampled rows that hold one of these folded terms (1 with no row sampled). */
export async function commonestTermShare(
  db: Db,
  spec: { table: string; searchFields: readonly string[] },
  folded: readonly string[],
): Promise<number> {
  const { texts, rows } = await sampleOf(db, spec.table, spec.searchFields);
  if (!rows) return 1;
  return Math.max(...folded.map((term) => texts.filter((fields) => fields.some((text) => text.includes(term))).length / rows));
}

/** An FTS5 query string requiring each of these folded strings as a phrase. */
export function allOf(folded: readonly string[]): string {
  return folded.map((t) => `"${t.replace(/"/g, '""')}"`).join(' AND ');
}

export interface TermPlan {
  /** Each term's FTS5 query: its phrase, or its rarest trigrams (the term then needs the predicate). */
  queries: string[];
  /** The terms the index narrows but does not decide. */
  narrowed: string[];
  /** The share of the sampled rows holding the rarest trigram of any term: at most this share match. */
  share: number;
  /**
   * With narrowed terms: the rows of every query, read by the plan (the rows that hold every
   * term are among them), so that the predicate runs on them without the index read again.
   */
  candidates?: number[];
}

/**
 * How to find these (indexable) terms: the terms of more than NARROWING trigrams by their rarest
 * trigrams, when together with the others' phrases these leave at most maxCandidates rows (the
 * rows that hold every term are among them); else every term as a phrase.
 */
export async function planTrigrams(
  db: Db,
  spec: { table: string; searchFields: readonly string[] },
  fts: string,
  terms: readonly string[],
  tuning: SearchTuning,
): Promise<TermPlan> {
  const folded = terms.map(searchFold);
  const { ranked, share } = await rankTrigrams(db, spec, folded);
  const phrases = { queries: folded.map((f) => allOf([f])), narrowed: [], share };
  const long = ranked.map((grams) => grams.length > NARROWING);
  if (!long.some(Boolean)) return phrases;
  const queries = folded.map((f, i) => allOf(long[i] ? ranked[i].slice(0, NARROWING) : [f]));
  // Bounded: the AND stops at maxCandidates rows, however common its trigrams are. One row back
  // (the count and the ids), not a row per candidate.
  const probe = db(fts)
    .select('rowid')
    .whereRaw('?? MATCH ?', [fts, queries.join(' AND ')])
    .limit(tuning.maxCandidates);
  const [{ n, ids }] = await db
    .from<{ n: number; ids: string }>(probe.as('c'))
    .select<{ n: number; ids: string }[]>(db.raw('count(*) AS n, json_group_array(rowid) AS ids'));
  if (Number(n) >= tuning.maxCandidates) return phrases;
  return { queries, narrowed: terms.filter((_, i) => long[i]), share, candidates: JSON.parse(ids) as number[] };
}

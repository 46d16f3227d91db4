import type { SearchTuning } from '../tuning';
import type { Knex } from 'knex';
import { type Db, perPool } from '../../db/connection';
import { applySearch } from '../predicate';
import { spread, trigramsOf } from '../sqlite/trigrams';
import { IdSet } from './postings';
import { readWords } from './postingsTable';
import { sampleTerms } from './wordSample';
import { foldSql, GRAM, wordCode, wordTables } from './wordIndex';

/**
 * A term that more vocabulary words contain than this (`e`, `a`) is not looked up in the index:
 * the other terms' candidates are checked with the scan's predicate instead, or, with no other
 * term, the table is scanned (as SQLite does for terms of fewer than 3 characters).
 */
export const MAX_WORDS = 1000;

/** How a piece of a term must sit in a token: a phrase's first piece ends a token, and so on. */
type Place = 'inside' | 'end' | 'whole' | 'start';

export interface WordPlan {
  /** One `+(...)` group per constraint, for MATCH ... AGAINST in boolean mode. */
  groups: string[];
  /** The vocabulary ids of each group's words (their postings' OR is the group's records). */
  words: number[][];
  /** Some term has no word in the vocabulary: no indexed record holds it. */
  none: boolean;
  /** Terms the index narrows but does not decide (phrases, and terms of too many words). */
  checked: string[];
  /**
   * Some record was pending when the search began (see applyWords). One that becomes pending
   * later (a bulk load committing meanwhile) is answered as it was before that write.
   */
  pending: boolean;
  /**
   * About the largest share of the rows that can hold every term, from the sample: one more than
   * the fewest sampled rows any term is in, over the sample's size (1 when the table is smaller).
   */
  share: number;
}

export function piecePredicate(place: Place, word: string, term: string): string {
  if (place === 'inside') return `INSTR(${word}, ${term}) > 0`;
  if (place === 'start') return `INSTR(${word}, ${term}) = 1`;
  if (place === 'end') return `INSTR(REVERSE(${word}), REVERSE(${term})) = 1`;
  return `${word} = ${term}`;
}

/**
 * How many of a piece's trigrams narrow its words before the predicate decides: enough to leave
 * few words besides those holding the piece, few enough to keep the join's plan cheap to make.
 */
const JOINED_GRAMS = 4;

/** Folds kept per pool (its config), by fold expression and piece; the fold of a text never changes. */
const folds = new WeakMap<object, Map<string, string>>();
const KEPT_FOLDS = 10_000;

/** The piece as the server folds it (`term`: foldSql's expression of one bound value). */
async function foldHere(db: Db, term: string, piece: string): Promise<string> {
  const kept = perPool(folds, db, () => new Map<string, string>());
  const key = `${term}\u0000${piece}`;
  let folded = kept.get(key);
  if (folded === undefined) {
    [{ folded }] = await db.select<{ folded: string }[]>(db.raw(`${term} AS ??`, [piece, 'folded']));
    // Emptied when full: a search's round trip is saved for the pieces searched often.
    if (kept.size >= KEPT_FOLDS) kept.clear();
    kept.set(key, folded);
  }
  return folded;
}

/**
 * Vocabulary ids of the tokens that hold `piece` as `place` says, under the scan's fold; at most
 * MAX_WORDS + 1. A piece of 3 characters or more: the words holding some of its trigrams (a few
 * probes of the gram table), then the predicate; a shorter one: a scan of the folded words.
 */
async function lookUp(db: Db, table: string, piece: string, place: Place, collation: string | undefined): Promise<number[]> {
  const { words, grams } = wordTables(table);
  const term = foldSql(collation);
  // As the gram table holds them (UTF-8 bytes); none for a piece under 3 characters once folded.
  const wanted =
    [...piece].length >= GRAM ? spread(trigramsOf(await foldHere(db, term, piece)), JOINED_GRAMS).map((g) => Buffer.from(g, 'utf8')) : [];
  // Words with a folded copy through the grams or its index; the few too long for it folded here.
  let short: Knex.QueryBuilder;
  if (wanted.length) {
    // One probe of the gram table's key per gram and word, from the gram in the fewest words (the
    // optimizer's index dives count them), rather than grouping every gram's words.
    const holding = db({ g0: grams }).select('g0.word_id').where('g0.gram', wanted[0]);
    wanted.slice(1).forEach((gram, i) => {
      const g = `g${i + 1}`;
      holding.join({ [g]: grams }, (on) => on.on(`${g}.word_id`, 'g0.word_id').andOnVal(`${g}.gram`, gram));
    });
    short = db
      .select('w.id')
      .from(holding.as('g'))
      .join({ w: words }, 'w.id', 'g.word_id')
      .whereRaw(piecePredicate(place, '??', term), ['w.folded', piece]);
  } else {
    short = db(words)
      .select('id')
      .whereRaw(piecePredicate(place, '??', term), ['folded', piece]);
  }
  const long = db(words)
    .select('id')
    .whereNull('folded')
    .whereRaw(piecePredicate(place, foldSql(collation, '??'), term), ['word', piece]);
  const ids: (number | string)[] = await db
    .select('id')
    .from(short.unionAll(long, true).as('w'))
    .limit(MAX_WORDS + 1)
    .pluck('id');
  return ids.map(Number);
}

/** What each term needs of a record's tokens (white space splits a phrase into pieces). */
function pieces(term: string): [string, Place][] {
  const parts = term.split(/\s+/u);
  if (parts.length === 1) return [[term, 'inside']];
  const last = parts.length - 1;
  return parts.flatMap((p, i): [string, Place][] => (p === '' ? [] : [[p, i === 0 ? 'end' : i === last ? 'start' : 'whole']]));
}

export async function planWords(
  db: Db,
  table: string,
  fields: readonly string[],
  terms: readonly string[],
  collation: string | undefined,
  tuning: SearchTuning,
): Promise<WordPlan> {
  const { common, share, pending } = await sampleTerms(db, table, fields, terms, collation, tuning);
  const plan: WordPlan = { groups: [], words: [], none: false, checked: [...common], pending, share };
  for (const term of terms) {
    if (common.has(term)) continue;
    const wanted = pieces(term);
    // A term without white space is decided by its tokens; a phrase is only narrowed by them.
    let decided = !/\s/u.test(term);
    for (const [piece, place] of wanted) {
      const ids = await lookUp(db, table, piece, place, collation);
      if (!ids.length) return { ...plan, none: true };
      if (ids.length > MAX_WORDS) decided = false;
      else {
        plan.groups.push(`+(${ids.map(wordCode).join(' ')})`);
        plan.words.push(ids);
      }
    }
    if (!decided) plan.checked.push(term);
  }
  return plan;
}

const matchSql = 'SELECT ?? FROM ?? WHERE MATCH(??) AGAINST(? IN BOOLEAN MODE)';

/**
 * Narrows `query` to the records holding every term: indexed records by the index (then the
 * checked terms by the scan's predicate), pending records by the scan's predicate alone.
 */
export function applyWords(
  query: Knex.QueryBuilder,
  table: string,
  fields: readonly string[],
  terms: readonly string[],
  plan: WordPlan,
  collation: string | undefined,
): void {
  const t = wordTables(table);
  const id = `${table}.id`;
  if (!plan.pending) {
    // The usual case: no record pending (the indexer keeps the list short). Without the
    // OR below, the optimizer reads the index's matches first and joins the records to them.
    if (plan.none) query.whereRaw('1 = 0');
    else query.whereRaw(`?? IN (${matchSql})`, [id, 'id', t.docs, 'codes', plan.groups.join(' ')]);
    if (plan.checked.length) applySearch(query, fields, plan.checked, collation);
    return;
  }
  query.where((either) => {
    if (!plan.none) {
      either.where((indexed) => {
        indexed.whereRaw(`?? IN (${matchSql})`, [id, 'id', t.docs, 'codes', plan.groups.join(' ')]);
        indexed.whereRaw('?? NOT IN (SELECT ?? FROM ??)', [id, 'id', t.pending]);
        if (plan.checked.length) applySearch(indexed, fields, plan.checked, collation);
      });
    }
    either.orWhere((pending) => {
      pending.whereRaw('?? IN (SELECT ?? FROM ??)', [id, 'id', t.pending]);
      applySearch(pending, fields, terms, collation);
    });
  });
}

/**
 * The ids of the records holding every term, from the index alone, when it decides them all
 * (no pending record, no checked term); else undefined.
 */
export function matchingIds(db: Db, table: string, plan: WordPlan): (() => Knex.QueryBuilder) | undefined {
  if (plan.pending || plan.checked.length) return undefined;
  return () => {
    const docs = db(wordTables(table).docs).select('id');
    return plan.none ? docs.whereRaw('1 = 0') : docs.whereRaw('MATCH(??) AGAINST(? IN BOOLEAN MODE)', ['codes', plan.groups.join(' ')]);
  };
}

/** The number of records holding every term, from the index (and the pending records) alone. */
export async function countWords(
  db: Db,
  table: string,
  fields: readonly string[],
  terms: readonly string[],
  plan: WordPlan,
  collation: string | undefined,
): Promise<number> {
  const t = wordTables(table);
  let indexed = 0;
  if (!plan.none) {
    const query = db(t.docs).whereRaw('MATCH(??) AGAINST(? IN BOOLEAN MODE)', ['codes', plan.groups.join(' ')]);
    if (plan.pending) query.whereNotIn('id', db(t.pending).select('id'));
    const [{ n }] = await query.count({ n: '*' });
    indexed = Number(n);
  }
  if (!plan.pending) return indexed;
  const pending = db(table).whereIn('id', db(t.pending).select('id'));
  applySearch(pending, fields, terms, collation);
  const [{ n }] = await pending.count({ n: '*' });
  return indexed + Number(n);
}

/**
 * The records holding every term, from the postings, when the index decides every term (no
 * checked term): each group's words ORed, the groups ANDed; then the pending records taken out
 * and those the scan's predicate accepts put back, so the set is exact in this snapshot.
 * Undefined when more than `maxPending` records are pending (after a bulk load).
 */
export async function postingsMatches(
  db: Db,
  table: string,
  fields: readonly string[],
  terms: readonly string[],
  plan: WordPlan,
  collation: string | undefined,
  maxPending: number,
): Promise<IdSet | undefined> {
  const t = wordTables(table);
  const pending = (
    (await db(t.pending)
      .limit(maxPending + 1)
      .pluck('id')) as (number | string)[]
  ).map(Number);
  if (pending.length > maxPending) return undefined;
  let set = new IdSet();
  if (!plan.none) {
    for (const [i, words] of plan.words.entries()) {
      const holding = await readWords(db, table, words);
      set = i ? set.and(holding) : holding;
    }
  }
  for (const id of pending) set.delete(id);
  if (pending.length) {
    const passing = db(table).whereIn('id', pending);
    applySearch(passing, fields, terms, collation);
    for (const id of (await passing.pluck('id')) as (number | string)[]) set.add(Number(id));
  }
  return set;
}

import { setImmediate } from 'node:timers/promises';
import type { Knex } from 'knex';
import { type Db, inTransaction, isMysql } from '../db/connection';
import { searchFold } from './fold';
import { orderIndexName } from '../db/order';
import { planDenseCount } from './mysql/denseWords';
import { applySearch, foldCollation, READ_AS_REPLACEMENT } from './predicate';
import { indexedFields, removalsOf } from './mysql/wordIndex';
import type { SearchTuning } from './tuning';
import { commonestTermShare, planTrigrams, rankTrigrams, type TermPlan } from './sqlite/trigrams';
import { decidingTerms, tokenEligible, tokenQuery, tokenTables } from './sqlite/tokens';
import { hasTrigram, indexable, indexTable } from './sqlite/trigramIndex';
import { applyWords, countWords, matchingIds, planWords, postingsMatches } from './mysql/wordSearch';
import type { IdSet } from './mysql/postings';

export interface SearchPlan {
  /**
   * Narrows a query on the table to the records holding every term. `walk` keeps SQLite from
   * reading matches by id first (then sorting all their rows): it walks the order (matches.ts).
   */
  apply(query: Knex.QueryBuilder, walk?: boolean): void;
  /**
   * At most about this share of the rows match, from a sample of the table (sqlite/trigrams.ts,
   * mysql/wordSample.ts); undefined when the index does not narrow the search.
   */
  share?: number;
  /** At most this many records match, when the plan read their candidates (sqlite/trigrams.ts). */
  atMost?: number;
  /** The index narrows the search (else every row's text is read). */
  indexed: boolean;
  /**
   * Reading the matches from the index again costs less than preloading their ids or checking rows
   * with the scan's predicate (SQLite's token index): a page reads them through `apply`.
   */
  cheapReads?: boolean;
  /** The number of records holding every term from the index alone, when it can tell. */
  count?: () => Promise<number>;
  /** `count` reads no record and no FULLTEXT match (MySQL's postings): it waits for no search slot. */
  countReadsNoRow?: boolean;
  /** Every match's id, ascending, when the postings found at most `tuning.postingsInList`: a page reads them by id. */
  matchIds?: readonly number[];
  /** Every match (MySQL's postings): a page may walk the order's index and test each id in it. */
  members?: IdSet;
  /**
   * The ids of every match when there are at most `tuning.preloadedWithCount`, read with the count
   * (SQLite's token index, several terms); else undefined.
   */
  few?: () => Promise<number[] | undefined>;
  /** Their ids (as `id`), from the index alone, when it can tell. */
  ids?: () => Knex.QueryBuilder;
  /**
   * Narrows a query on the table to these ids (matches read before: matches.ts). With `walk`,
   * the query walks its order's index (`created_at`, `id`) and tests each entry's id.
   */
  among(query: Knex.QueryBuilder, ids: readonly number[], walk: boolean): void;
  /** The most entries of the order's index a page may walk to find its matches among `count`. */
  walkLimit(count: number): number;
}

/** Searches run before one holds the index's removals off for its whole run (inSearchSnapshot). */
export const SNAPSHOT_TRIES = 3;

/**
 * Runs a search's statements in one snapshot, so a record indexed between plan and page is not
 * missed by both. MySQL's FULLTEXT applies removals at once (REMOVALS): a search that saw one
 * committed runs again, the last try holding them off.
 */
export async function inSearchSnapshot<T>(db: Db, table: string, work: (db: Db) => Promise<T>): Promise<T> {
  if (!indexedFields(table) || inTransaction(db)) return work(db);
  // SQLite: a read transaction, whose first read fixes the snapshot (WAL) for the rest; writers
  // in other processes go on meanwhile. Searches waiting for the connection take it one after
  // another in promise callbacks: each first lets the event loop read the requests that came
  // meanwhile (an in-memory database, which has no search thread, runs statements on this one).
  if (!isMysql(db))
    return db.transaction(async (trx) => {
      await setImmediate();
      return work(trx);
    });
  for (let tries = 1; ; tries++) {
    const last = tries >= SNAPSHOT_TRIES;
    // REPEATABLE READ whatever the server's default: every read sees the snapshot of the first
    // plain read (of the removals on every try but the last; on the last, work's first, after
    // the lock is held).
    const done = await db.transaction(
      async (trx) => {
        const before = await removalsOf(trx, table, last);
        const result = await work(trx);
        return !last && (await removedSince(trx, table, before)) ? undefined : { result };
      },
      { isolationLevel: 'repeatable read' },
    );
    if (done) return done.result;
  }
}

/** MariaDB's answer to a locking read of a row changed since the snapshot, with innodb_snapshot_isolation on (its default from 11.6). */
const ER_CHECKREAD = 1020;

/** Whether a removal committed since the snapshot (which counted `before`). */
async function removedSince(trx: Db, table: string, before: number): Promise<boolean> {
  try {
    return (await removalsOf(trx, table, true)) !== before;
  } catch (err) {
    // The row changed since the snapshot: a removal; MariaDB has rolled the transaction back.
    if ((err as { errno?: number }).errno === ER_CHECKREAD) return true;
    throw err;
  }
}

/**
 * How this database answers these terms: on SQLite, terms of 3 characters or more by the trigram
 * index (as a phrase, or by their rarest trigrams and then the scan's predicate: sqlite/trigrams.ts) and
 * the rest by the scan's predicate; on MySQL, by the word index (mysql/wordSearch.ts).
 */
export async function planSearch(
  db: Db,
  spec: { table: string; searchFields: readonly string[] },
  terms: readonly string[],
  tuning: SearchTuning,
): Promise<SearchPlan> {
  const { table, searchFields: fields } = spec;
  if (isMysql(db)) {
    const among = (q: Knex.QueryBuilder, ids: readonly number[], walk: boolean) => {
      // MySQL picks the order's index for a long IN list only when told; else it looks each id
      // up and sorts them, several times slower.
      if (walk) q.from(db.raw('?? FORCE INDEX (??)', [table, orderIndexName(table)]));
      q.whereIn(`${table}.id`, ids);
    };
    const walkLimit = (count: number) => tuning.walkPerMatch * count;
    if (!terms.length) return { apply: () => {}, indexed: false, among, walkLimit };
    const collation = await foldCollation(db);
    const scan: SearchPlan = { apply: (q) => applySearch(q, fields, terms, collation), indexed: false, among, walkLimit };
    if (!indexedFields(table)) return scan;
    const plan = await planWords(db, table, fields, terms, collation, tuning);
    if (tuning.postings && !plan.checked.length) {
      const members = await postingsMatches(db, table, fields, terms, plan, collation, tuning.maxPreloaded);
      if (members) {
        const ids = members.ids(tuning.maxPreloaded);
        const size = members.size;
        return {
          // Few matches: their ids; else FULLTEXT, for pages with filters or in other orders.
          apply: ids ? (q) => void q.whereIn(`${table}.id`, ids) : (q) => applyWords(q, table, fields, terms, plan, collation),
          share: plan.share,
          atMost: size,
          indexed: true,
          count: () => Promise.resolve(size),
          countReadsNoRow: true,
          matchIds: ids && ids.length <= tuning.postingsInList ? ids : undefined,
          members,
          among,
          walkLimit,
        };
      }
    }
    if (!plan.none && !plan.groups.length) {
      // Terms in most records: the page walks the order with the scan's predicate (it fills
      // soon); the count, from the dense words' lists where they hold every term.
      const count = await planDenseCount(db, table, fields, terms, collation);
      return count ? { ...scan, count } : scan;
    }
    return {
      apply: (q) => applyWords(q, table, fields, terms, plan, collation),
      share: plan.share,
      indexed: true,
      count: plan.checked.length ? undefined : () => countWords(db, table, fields, terms, plan, collation),
      ids: matchingIds(db, table, plan),
      among,
      walkLimit,
    };
  }
  const among = (q: Knex.QueryBuilder, ids: readonly number[], walk: boolean) => {
    // `+` keeps SQLite from reading the ids first (then sorting all their rows): it walks the order.
    q.whereRaw(`${walk ? '+' : ''}?? IN (SELECT value FROM json_each(?))`, [`${table}.id`, JSON.stringify(ids)]);
  };
  const walkLimit = () => tuning.walkEntries;
  if (!terms.length) return { apply: () => {}, indexed: false, among, walkLimit };
  const byTokens = await planTokens(db, spec, terms, tuning, among, walkLimit);
  if (byTokens) return byTokens;
  const fts = indexTable(table);
  const indexed = terms.filter(indexable);
  const none: TermPlan = { queries: [], narrowed: [], share: 1 };
  const { queries, narrowed, share, candidates } = indexed.length ? await planTrigrams(db, spec, fts, indexed, tuning) : none;
  /**
   * Terms the predicate decides: too short for a trigram, narrowed by their rarest ones, or
   * holding a character the index reads as another (its match is then only a candidate).
   */
  const checked = terms.filter((t) => !indexable(t) || narrowed.includes(t) || READ_AS_REPLACEMENT.test(searchFold(t)));
  const match = queries.join(' AND ');
  const decided = queries.length > 0 && !checked.length;
  return {
    apply(q, walk = false) {
      if (candidates) among(q, candidates, walk);
      else if (queries.length)
        q.whereRaw(`${walk ? '+' : ''}?? IN (SELECT rowid FROM ?? WHERE ?? MATCH ?)`, [`${table}.id`, fts, fts, match]);
      // On a probe's candidates, which mostly hold the terms, LIKE first (predicate.ts).
      if (checked.length) applySearch(q, fields, checked, undefined, candidates !== undefined);
    },
    share,
    atMost: candidates?.length,
    indexed: queries.length > 0,
    count: decided ? () => countMatches(db, fts, match) : undefined,
    ids: decided ? () => db(fts).select({ id: 'rowid' }).whereRaw('?? MATCH ?', [fts, match]) : undefined,
    among,
    walkLimit,
  };
}

/**
 * SQLite: the token index's plan (sqlite/tokens.ts), when it decides every term and none is common (by
 * the trigram sample: `tuning.tokenShare`); else undefined.
 */
async function planTokens(
  db: Db,
  spec: { table: string; searchFields: readonly string[] },
  terms: readonly string[],
  tuning: SearchTuning,
  among: SearchPlan['among'],
  walkLimit: SearchPlan['walkLimit'],
): Promise<SearchPlan | undefined> {
  const folded = terms.map(searchFold);
  if (!folded.every((f) => hasTrigram(f) && tokenEligible(f))) return undefined;
  const { share } = await rankTrigrams(db, spec, folded);
  // Made of common trigrams (`where`: `whe`, `her`, `ere`) is not common: the token index reads
  // the lists of the tokens holding a term, which are short unless the term itself is common.
  if (share > tuning.tokenShare && (await commonestTermShare(db, spec, folded)) > tuning.tokenShare) return undefined;
  const match = await tokenQuery(db, spec.table, folded, tuning);
  if (match === undefined) return undefined;
  if (!match) {
    // Some term is in no token: nothing matches.
    const none = (q: Knex.QueryBuilder) => q.whereRaw('0 = 1');
    return {
      apply: (q) => void none(q),
      share: 0,
      atMost: 0,
      indexed: true,
      count: () => Promise.resolve(0),
      ids: () => none(db(spec.table).select('id')),
      among,
      walkLimit,
    };
  }
  const { tokens } = tokenTables(spec.table);
  // Several terms: the AND of their tokens' lists costs as much for the page as for the count,
  // so few matches are read with the count.
  let counted: Promise<{ n: number; ids?: number[] }> | undefined;
  const withIds = () => (counted ??= countWithIds(db, tokens, match, tuning.preloadedWithCount));
  const several = decidingTerms(folded).length > 1;
  return {
    apply(q, walk = false) {
      q.whereRaw(`${walk ? '+' : ''}?? IN (SELECT rowid FROM ?? WHERE ?? MATCH ?)`, [`${spec.table}.id`, tokens, tokens, match]);
    },
    share,
    indexed: true,
    cheapReads: true,
    count: several ? async () => (await withIds()).n : () => countMatches(db, tokens, match),
    few: several ? async () => (await withIds()).ids : undefined,
    ids: () => db(tokens).select({ id: 'rowid' }).whereRaw('?? MATCH ?', [tokens, match]),
    among,
    walkLimit,
  };
}

/** The number of rows an FTS5 query matches, from the index alone. */
async function countMatches(db: Db, fts: string, match: string): Promise<number> {
  const [{ n }] = await db(fts).whereRaw('?? MATCH ?', [fts, match]).count({ n: '*' });
  return Number(n);
}

/** The same count, and the rows' ids when there are at most `few`, in one evaluation of the query. */
async function countWithIds(db: Db, fts: string, match: string, few: number): Promise<{ n: number; ids?: number[] }> {
  const [{ n, ids }] = await db(fts)
    .whereRaw('?? MATCH ?', [fts, match])
    .select<{ n: number; ids: string | null }[]>(
      db.raw('count(*) AS n, CASE WHEN count(*) <= ? THEN json_group_array(rowid) END AS ids', [few]),
    );
  return { n: Number(n), ids: ids === null ? undefined : (JSON.parse(ids) as number[]) };
}

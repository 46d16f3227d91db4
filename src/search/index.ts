import type { Knex } from 'knex';
import { type Db, isMysql } from '../db/connection';
import type { ListRequest, ListResult, Queryable, Row, SeekRequest, TableSpec } from '../db/pages';
import { onRecordsWritten } from '../db/records';
import { addSqliteFunctions } from '../db/sqliteFunctions';
import { type LimiterStats, SearchLimiter } from './limiter';

export { SearchLimiter };
export type { Costly } from './limiter';
import { listMatches, type SearchContext, searching, seekMatches } from './list';
import { chooseDenseWords } from './mysql/denseWords';
import { type Indexer, type IndexerOptions, pendingWritten, startIndexer } from './mysql/indexer';
import { emptyWordIndex, indexedFields, indexPending, wordTables } from './mysql/wordIndex';
import { pruneVocabulary } from './sqlite/tokens';
import { defaultTuning, type SearchTuning } from './tuning';

// The search module: everything that knows how `?search=` is answered. The list code hands it
// the requests that carry terms; writes tell it what they changed; loads and maintenance scripts
// call the functions below. Each database has its engine: sqlite/ (FTS5 trigram and token
// indexes kept by triggers) and mysql/ (a word index kept by a background indexer).
// docs/search.md describes both.

/** The scan's predicate: the definition of a match, which every index agrees with (tests, bench). */
export { applySearch, foldCollation, parseSearch } from './predicate';
export { searchLimits } from './limiter';
export type { SearchTuning, LimiterStats, Indexer };
export { defaultTuning };

/** Answers the lists that carry search terms, on either database, with one tuning and one limiter. */
export interface Search {
  /** A page of the records holding every term, and its exact count. */
  list(pool: Db, spec: TableSpec, request: ListRequest): Promise<ListResult>;
  /** A cursor page of the records holding every term. */
  seek(pool: Db, spec: TableSpec, request: SeekRequest): Promise<Row[]>;
  /** MySQL: search statements that visit every match, running and waiting (for /metrics). */
  stats(): LimiterStats;
  readonly tuning: Readonly<SearchTuning>;
}

/**
 * A search engine with this tuning (defaults: tuning.ts). Each holds its own limiter, so one per
 * process serves every request; DB_SEARCH_TURNS and DB_POOL_SIZE set `searchTurns`, `poolSize`.
 */
export function createSearch(tuning: Partial<SearchTuning> = {}, options: { limiter?: SearchLimiter } = {}): Search {
  const settled = { ...defaultTuning, ...tuning };
  const ctx: SearchContext = {
    tuning: settled,
    // Given by tests that hold its slots themselves.
    limiter:
      options.limiter ??
      new SearchLimiter(
        () => settled.searchTurns,
        () => settled.poolSize,
      ),
  };
  return {
    list: (pool, spec, request) => searching(ctx, pool, spec.table, (db, costly) => listMatches(ctx, db, spec, request, costly)),
    seek: (pool, spec, request) => searching(ctx, pool, spec.table, (db, costly) => seekMatches(ctx, db, spec, request, costly)),
    stats: () => ctx.limiter.stats(),
    tuning: ctx.tuning,
  };
}

/**
 * A write changed records of `table`. On MySQL the writing statement's triggers listed them as
 * pending; this process's indexer indexes them soon. SQLite's triggers index in the write itself.
 */
function recordsWritten(db: Queryable, table: string): void {
  if (isMysql(db) && indexedFields(table)) pendingWritten(table);
}
onRecordsWritten(recordsWritten);
// Every SQLite connection gets the functions search's predicate and triggers call.
addSqliteFunctions(require.resolve('./sqlFunctions'));

/**
 * Starts what keeps the index current beside the service: on MySQL the background indexer
 * (mysql/indexer.ts); on SQLite nothing, since triggers do it.
 */
export function keepIndex(db: Db, options: IndexerOptions = {}): Indexer | undefined {
  return isMysql(db) ? startIndexer(db, options) : undefined;
}

/**
 * Records a load's indexer takes per batch: a block postings row is rewritten once per batch
 * touching it, so a quarter of a block (65,536 ids) a batch rewrites each about four times.
 */
const LOADED_BATCH = 16_384;

/**
 * After a bulk load (seed, import): makes the loaded rows' search fast. MySQL indexes what the
 * load left pending, in batches, then chooses the dense words; SQLite's load indexed them.
 */
export async function indexLoaded(
  db: Knex,
  table: string,
  options: { batch?: number; onProgress?: (n: number) => void | Promise<void>; onDense?: (filled: number) => void } = {},
): Promise<number> {
  if (!isMysql(db)) return 0;
  const indexed = await indexPending(db, table, { batch: LOADED_BATCH, ...options });
  const { filled } = await chooseDenseWords(db, table);
  options.onDense?.(filled);
  return indexed;
}

/** What `npm run search-index` did to one table. */
export type Maintained =
  { engine: 'sqlite'; tokensRemoved: number } | { engine: 'mysql'; indexed: number; filled: number; dropped: number };

/**
 * Brings a table's index up to date by hand: SQLite takes out of the vocabulary the tokens no
 * record holds; MySQL indexes every pending record and chooses the dense words again.
 */
export async function maintainIndex(db: Knex, table: string, onProgress?: (n: number) => void): Promise<Maintained> {
  if (!isMysql(db)) return { engine: 'sqlite', tokensRemoved: await pruneVocabulary(db, table) };
  const indexed = await indexPending(db, table, { onProgress });
  return { engine: 'mysql', indexed, ...(await chooseDenseWords(db, table)) };
}

/** Whether every record of the table is indexed (MySQL leaves written records pending for a while). */
export async function indexUpToDate(db: Knex, table: string): Promise<boolean> {
  return !isMysql(db) || !(await db(wordTables(table).pending).first('id'));
}

/** MySQL, after TRUNCATE (which fires no trigger): empties the table's index with it. */
export async function emptyIndex(db: Knex, table: string): Promise<void> {
  if (isMysql(db)) await emptyWordIndex(db, table);
}

export { sqliteBulkIndex } from './sqlite/trigramIndex';
export * as searchSchema from './schema';

import type { Knex } from 'knex';
import type { Db } from '../db/connection';
import type { ListRequest, ListResult, Queryable, Row, SeekRequest, TableSpec } from '../db/pages';
import { onRecordsWritten } from '../db/records';
import { addSqliteFunctions } from '../db/sqliteFunctions';
import { type Indexer, type IndexerOptions, indexedFields, pendingWritten, startIndexer } from './indexer';
import { type LimiterStats, SearchLimiter } from './limiter';
import { listMatches, type SearchContext, searching, seekMatches } from './list';
import { choosePairable, indexPending, pendingCount, pendingTable } from './sets/indexer';
import { emptySetTables } from './sets/store';
import { defaultTuning, type SearchTuning } from './tuning';

// The search module: everything that knows how `?search=` is answered. The list code hands it
// the requests that carry terms; writes tell it what they changed; loads and maintenance scripts
// call the functions below. One engine on both databases: per key (a gram, a word, a pair of
// words) the set of record ids holding it (sets/). docs/search.md describes it.

export { SearchLimiter };
export type { Costly } from './limiter';
/** The scan's predicate: the definition of a match, which the index agrees with (tests, bench). */
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
  /** Costly search statements running and waiting (for /metrics). */
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
    list: (pool, spec, request) => searching(ctx, pool, (db, costly) => listMatches(ctx, db, spec, request, costly)),
    seek: (pool, spec, request) => searching(ctx, pool, (db, costly) => seekMatches(ctx, db, spec, request, costly)),
    stats: () => ctx.limiter.stats(),
    tuning: ctx.tuning,
  };
}

/** A write changed records of `table`: its triggers listed them as pending; this process's indexer indexes them soon. */
function recordsWritten(_db: Queryable, table: string): void {
  if (indexedFields(table)) pendingWritten(table);
}
onRecordsWritten(recordsWritten);
// Every SQLite connection gets the functions search's predicate calls.
addSqliteFunctions(require.resolve('./sqlFunctions'));

/** Starts the indexer that keeps the sets current beside the service (indexer.ts). */
export function keepIndex(db: Db, options: IndexerOptions = {}): Indexer {
  return startIndexer(db, options);
}

/**
 * Records a load's indexer takes per batch: a whole block of ids (BLOCK_SIZE), so that each set's
 * row of the block is written once; about 200 MB of keys in memory for posts.
 */
const LOADED_BATCH = 65_536;

function fieldsOf(table: string): readonly string[] {
  const fields = indexedFields(table);
  if (!fields) throw new Error(`${table} has no search fields`);
  return fields;
}

/**
 * After a bulk load (seed, import): indexes the loaded rows, which the load left pending. Into
 * empty sets, the pairable words are chosen first, from the loaded rows.
 */
export async function indexLoaded(
  db: Knex,
  table: string,
  options: { batch?: number; onProgress?: (n: number) => void | Promise<void> } = {},
): Promise<number> {
  const fields = indexedFields(table);
  if (!fields) return 0;
  await choosePairable(db, table, fields);
  return indexPending(db, table, fields, { batch: LOADED_BATCH, ...options });
}

/** What `npm run search-index` did to one table. */
export interface Maintained {
  indexed: number;
  /** The words whose pairs have sets, when the index was made again. */
  pairable?: number;
}

/**
 * Brings a table's index up to date by hand: indexes every pending record. With `rebuild`, makes
 * the sets again from the records, choosing the pairable words anew; searches stay exact
 * meanwhile, checking the records not yet indexed with the scan's predicate.
 */
export async function maintainIndex(
  db: Knex,
  table: string,
  options: { rebuild?: boolean; onProgress?: (n: number) => void } = {},
): Promise<Maintained> {
  const fields = fieldsOf(table);
  let pairable: string[] | undefined;
  if (options.rebuild) {
    await db.transaction(async (trx) => {
      await emptySetTables(trx, table);
      await trx(pendingTable(table)).delete();
      await trx.raw('INSERT INTO ?? (id, indexed) SELECT id, 0 FROM ??', [pendingTable(table), table]);
    });
    pairable = await choosePairable(db, table, fields);
  }
  const indexed = await indexPending(db, table, fields, { batch: LOADED_BATCH, onProgress: options.onProgress });
  return { indexed, ...(pairable && { pairable: pairable.length }) };
}

/** Whether every record of the table is indexed (writes leave records pending for a while). */
export async function indexUpToDate(db: Knex, table: string): Promise<boolean> {
  return !indexedFields(table) || (await pendingCount(db, table)) === 0;
}

/** After TRUNCATE (MySQL, which fires no trigger): empties the table's index with it. */
export async function emptyIndex(db: Knex, table: string): Promise<void> {
  if (!indexedFields(table)) return;
  await db.transaction(async (trx) => {
    await emptySetTables(trx, table);
    await trx(pendingTable(table)).delete();
  });
}

export * as searchSchema from './schema';

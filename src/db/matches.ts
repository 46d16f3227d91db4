import type { Knex } from 'knex';
import { type Db, isMysql } from './connection';
import { applyFilters, type Filter } from './filters';
import { searchTuning } from './searchTuning';
import { applyOrder, type OrderKey } from './order';
import type { SearchPlan } from './searchIndex';

// A search's matches can be read once and reused: the count is their number, and the page is
// read among their ids. Reading them for the count and again in the page's subquery cost every
// phrase on SQLite (42 ms for a long one at 1,000,000 posts) and every check of a candidate
// twice; on MySQL, InnoDB FULLTEXT visiting each matching document twice (about 10 µs each).

/** The ids of a search's matches, read before its page (heldMatches). */
export interface Held {
  ids: readonly number[];
  /** In the page's order: a page is a slice of them. Else in no order: the page is read among them. */
  inOrder: boolean;
}

/**
 * The ids of the rows holding every term and passing the filters, when the plan's candidates
 * or its sample expect at most maxHeld (searchTuning.ts) and there are; else undefined (common terms).
 * `order`: the page's, when a page can be a slice of them.
 */
export async function heldMatches(
  db: Db,
  table: string,
  plan: SearchPlan,
  filters: readonly Filter[],
  total: () => Promise<number>,
  order?: readonly OrderKey[],
): Promise<Held | undefined> {
  if (plan.atMost === 0) return { ids: [], inOrder: true }; // no candidate: nothing to read
  // 8,276 ids of 1,000,000 posts held in JavaScript and sent back for the page: 5.8 ms a search,
  // against 3.0 with the index read again for the page (the token index); a few read with the count, held.
  if (plan.cheapReads) {
    const ids = filters.length ? undefined : await plan.few?.();
    return ids && { ids, inOrder: false };
  }
  const expected = plan.atMost ?? (plan.share === undefined ? undefined : plan.share * (await total()));
  if (expected === undefined || expected > searchTuning.maxHeld) return undefined;
  const limit = searchTuning.maxHeld + 1;
  // From the index alone where it decides, as it finds them: past maxHeld, the rest are never
  // read (SQLite; InnoDB FULLTEXT finds them all first). Through the table, the database reads
  // every match of the index's subquery first.
  const fromIndex = !filters.length && plan.ids;
  // Through the table on SQLite, each match's row is read anyway (for the predicate or the
  // filters): sorting their order's keys there spares the page looking every one of them up
  // again to sort whole rows (a term in 469 of 1,000,000 posts: 8.5 ms a search, now 7.3).
  // Sorted once found, so that the LIMIT still bounds the rows read. MySQL's optimizer, told to
  // order with a LIMIT, may walk the order's index over the whole table instead.
  const sortBy = !fromIndex && !isMysql(db) ? order : undefined;
  let query: Knex.QueryBuilder;
  if (fromIndex) query = fromIndex().limit(limit);
  else {
    const columns = sortBy ? [...new Set(['id', ...sortBy.map((k) => k.column)])] : ['id'];
    query = narrowToMatches(db(table).select(columns), plan, filters).limit(limit);
  }
  if (sortBy) {
    // Materialized: flattened, the sort would come before the LIMIT.
    query = db.withMaterialized('held', query).from('held').select('id');
    applyOrder(query, sortBy, false);
  }
  const ids = ((await query) as { id: number | string }[]).map((r) => Number(r.id));
  return ids.length > searchTuning.maxHeld ? undefined : { ids, inOrder: sortBy !== undefined };
}

/** The default order (or its reverse), which every record table's created_at index serves. */
export function walksOrderIndex(order: readonly OrderKey[]): boolean {
  return order.length === 2 && order[0].column === 'created_at' && order[1].column === 'id' && order[0].desc === order[1].desc;
}

export interface PageOfMatches {
  plan: SearchPlan;
  filters: readonly Filter[];
  held?: Held;
  order: readonly OrderKey[];
  /** Rows of the order up to the page's end (offset and limit), and how many match of how many. */
  rowsBefore: number;
  count: number;
  total: () => Promise<number>;
}

/** Narrows a query on the table to the rows that hold every term and pass the filters (`walk`: see SearchPlan.apply). */
export function narrowToMatches(query: Knex.QueryBuilder, plan: SearchPlan, filters: readonly Filter[], walk = false): Knex.QueryBuilder {
  plan.apply(query, walk);
  applyFilters(query, filters);
  return query;
}

/**
 * Whether a page of matches walks the order's index and tests each entry's id. With many
 * matches, the page is near the start of the order's index (8,276 matches at 1,000,000 posts:
 * 7 ms on SQLite and 10 on MariaDB, where looking each one up and sorting them took 60). With
 * few, each is looked up and the few rows sorted. MySQL walks only among held ids: with the
 * index's subquery its optimizer decides. Asked before the page's query is made: the query's
 * share of the search's time budget is what is left when it is made.
 */
export async function pageWalks(page: PageOfMatches): Promise<boolean> {
  // Only plans with a share walk, and only with matches.
  return (
    page.plan.share !== undefined &&
    page.count > 0 &&
    walksOrderIndex(page.order) &&
    page.rowsBefore * (await page.total()) <= page.plan.walkLimit(page.count) * page.count
  );
}

/** Narrows a page's query to the matches: among the held ids, or by the plan and filters. */
export function narrowPage(query: Knex.QueryBuilder, page: PageOfMatches, walk: boolean): void {
  if (page.held) page.plan.among(query, page.held.ids, walk);
  else narrowToMatches(query, page.plan, page.filters, walk);
}

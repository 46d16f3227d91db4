import type { Knex } from 'knex';
import { type Db, isMysql } from '../db/connection';
import { applyFilters, type Filter } from '../db/filters';
import type { SearchTuning } from './tuning';
import { applyOrder, orderIndexName, type OrderKey } from '../db/order';
import { applyAfter } from '../db/keyset';
import type { IdSet } from './mysql/postings';
import type { SearchPlan } from './plan';

// When a search has few matches, their ids are read once and serve both the count and the page,
// instead of the index (or InnoDB FULLTEXT) finding every match twice.

/** The ids of a search's matches, read before its page (preloadMatches). */
export interface PreloadedMatches {
  ids: readonly number[];
  /** In the page's order: a page is a slice of them. Else in no order: the page is read among them. */
  inOrder: boolean;
}

/**
 * The ids of the rows holding every term and passing the filters, when the plan's candidates
 * or its sample expect at most maxPreloaded (tuning.ts) and there are; else undefined (common terms).
 * `order`: the page's, when a page can be a slice of them.
 */
export async function preloadMatches(
  db: Db,
  table: string,
  plan: SearchPlan,
  filters: readonly Filter[],
  total: () => Promise<number>,
  tuning: SearchTuning,
  order?: readonly OrderKey[],
): Promise<PreloadedMatches | undefined> {
  if (plan.atMost === 0) return { ids: [], inOrder: true }; // no candidate: nothing to read
  if (plan.members && !filters.length) return plan.matchIds && { ids: plan.matchIds, inOrder: false };
  // The token index reads its matches again cheaply: only the few read with the count are kept.
  if (plan.cheapReads) {
    const ids = filters.length ? undefined : await plan.few?.();
    return ids && { ids, inOrder: false };
  }
  const expected = plan.atMost ?? (plan.share === undefined ? undefined : plan.share * (await total()));
  if (expected === undefined || expected > tuning.maxPreloaded) return undefined;
  const limit = tuning.maxPreloaded + 1;
  // From the index alone where it decides, so that past the limit the rest are never read.
  const fromIndex = !filters.length && plan.ids;
  // Through the table on SQLite each row is read anyway, so its order's keys are sorted there and
  // the page is a slice. Not on MySQL: told to order with a LIMIT, it may walk the whole table.
  const sortBy = !fromIndex && !isMysql(db) ? order : undefined;
  let query: Knex.QueryBuilder;
  if (fromIndex) query = fromIndex().limit(limit);
  else {
    const columns = sortBy ? [...new Set(['id', ...sortBy.map((k) => k.column)])] : ['id'];
    query = narrowToMatches(db(table).select(columns), plan, filters).limit(limit);
  }
  if (sortBy) {
    // Materialized: flattened, the sort would come before the LIMIT.
    query = db.withMaterialized('preloaded', query).from('preloaded').select('id');
    applyOrder(query, sortBy, false);
  }
  const ids = ((await query) as { id: number | string }[]).map((r) => Number(r.id));
  return ids.length > tuning.maxPreloaded ? undefined : { ids, inOrder: sortBy !== undefined };
}

/** The default order (or its reverse), which every record table's created_at index serves. */
export function walksOrderIndex(order: readonly OrderKey[]): boolean {
  return order.length === 2 && order[0].column === 'created_at' && order[1].column === 'id' && order[0].desc === order[1].desc;
}

export interface PageOfMatches {
  plan: SearchPlan;
  filters: readonly Filter[];
  preloaded?: PreloadedMatches;
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
 * Whether a page of matches walks the order's index and tests each entry's id: with many
 * matches the page fills near the index's start; with few, looking each up and sorting is cheaper.
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

/** Narrows a page's query to the matches: among the preloaded ids, or by the plan and filters. */
export function narrowPage(query: Knex.QueryBuilder, page: PageOfMatches, walk: boolean): void {
  if (page.preloaded) page.plan.among(query, page.preloaded.ids, walk);
  else narrowToMatches(query, page.plan, page.filters, walk);
}

/** Order index entries read by a walk's first statement at least, and by any at most. */
const WALK_CHUNK = { min: 200, max: 50_000 };

/**
 * MySQL: the ids of the first `wanted` members in the default order (or its reverse), past a
 * cursor's `after` (created_at, id) if given, by walking the created_at index in chunks and
 * testing each id in the set; undefined past `maxEntries` entries (matches all at the far end),
 * when reading them by id costs less.
 */
export async function walkMembers(
  db: Db,
  table: string,
  order: readonly OrderKey[],
  members: IdSet,
  wanted: number,
  count: number,
  total: number,
  maxEntries: number,
  after?: readonly Knex.Value[],
): Promise<number[] | undefined> {
  const found: number[] = [];
  // Sized to find the page in one statement when the matches are spread evenly.
  let chunk = Math.min(WALK_CHUNK.max, Math.max(WALK_CHUNK.min, Math.ceil((2 * wanted * total) / Math.max(count, 1))));
  let last: readonly Knex.Value[] | undefined = after;
  for (let walked = 0; walked < maxEntries;) {
    // Ids alone: decoding every entry's created_at cost a quarter of the walk; the next chunk
    // starts from the last entry's, read by its id.
    const query = db.from(db.raw('?? FORCE INDEX (??)', [table, orderIndexName(table)])).select('id');
    if (last) applyAfter(query, order, last as Knex.Value[], true);
    applyOrder(query, order, true);
    const rows = (await query.limit(chunk)) as { id: number | string }[];
    walked += rows.length;
    for (const r of rows) {
      if (members.has(Number(r.id)) && found.push(Number(r.id)) === wanted) return found;
    }
    if (rows.length < chunk) return found;
    const end = rows[rows.length - 1].id;
    const edge = await db(table).where('id', end).first<{ created_at: string } | undefined>('created_at');
    if (!edge) return undefined; // outside a search's snapshot it can be gone: the caller reads by id
    last = [edge.created_at, end];
    chunk = Math.min(WALK_CHUNK.max, chunk * 2);
  }
  return undefined;
}

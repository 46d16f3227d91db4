import type { Knex } from 'knex';
import { type Db, isMysql, readerOf, withDeadline } from '../db/connection';
import { countAll } from '../db/counts';
import { applyFilters } from '../db/filters';
import { applyAfter, reversed } from '../db/keyset';
import { applyOrder } from '../db/order';
import {
  countRows,
  DEFERRED_JOIN_OFFSET,
  type ListRequest,
  type ListResult,
  pageRows,
  type Row,
  rowsOf,
  type SeekRequest,
  type TableSpec,
} from '../db/pages';
import type { Costly, SearchLimiter } from './limiter';
import { narrowPage, narrowToMatches, pageWalks, type PreloadedMatches, preloadMatches, walkMembers, walksOrderIndex } from './matches';
import { inSearchSnapshot, planSearch, type SearchPlan } from './plan';
import { applySearch, foldCollation } from './predicate';
import type { SearchTuning } from './tuning';

/** What a search's list needs besides the request: its engine's tuning and limiter. */
export interface SearchContext {
  tuning: SearchTuning;
  limiter: SearchLimiter;
}

/**
 * A search's statements share one deadline and one snapshot (inSearchSnapshot); on MySQL those
 * that visit every match go through the search limiter (limiter.ts). `terms` is never empty.
 */
export function searching<T>(ctx: SearchContext, pool: Db, table: string, work: (db: Db, costly: Costly) => Promise<T>): Promise<T> {
  const { db: timed, until } = withDeadline(readerOf(pool));
  return ctx.limiter.search(until, (costly) => inSearchSnapshot(timed, table, (db) => work(db, costly)));
}

/** A page of the records holding every term, and its exact count. */
export async function listMatches(ctx: SearchContext, db: Db, spec: TableSpec, request: ListRequest, costly: Costly): Promise<ListResult> {
  const { tuning } = ctx;
  const plan = await planSearch(db, spec, request.terms, tuning);
  const total = once(() => countAll(db, spec.table));
  const preloaded = await preloadMatches(db, spec.table, plan, request.filters, total, tuning, request.order);
  // On MySQL a search's count visits every match (InnoDB FULLTEXT, or the rows through the
  // scan's predicate or the filters) unless they are preloaded or the dense words' lists count them.
  const visitsAll = isMysql(db) && !preloaded;
  const counted = () => countRows(narrowToMatches(db(spec.table), plan, request.filters));
  const count = preloaded
    ? preloaded.ids.length
    : plan.count && !request.filters.length
      ? // The index holds exactly the table's rows: a common term costs no visit to them.
        await limitedIf(visitsAll && plan.indexed && !plan.countReadsNoRow, costly, plan.count)
      : await limitedIf(visitsAll, costly, counted);
  const offset = (request.page - 1) * request.pageSize;
  if (request.page > 1 && offset >= count) return { count, pastEnd: true };
  if (!count) return { count, rows: [] }; // exact: there is no row to read
  if (preloaded?.inOrder) return { count, rows: await rowsOf(db, spec.table, preloaded.ids.slice(offset, offset + request.pageSize)) };

  if (plan.members && !preloaded && !request.filters.length && offset < DEFERRED_JOIN_OFFSET && walksOrderIndex(request.order)) {
    // Many matches from the postings: the order's index walked, each id tested in the set.
    const { members } = plan;
    const ids = await walkMembers(
      db,
      spec.table,
      request.order,
      members,
      offset + request.pageSize,
      count,
      await total(),
      tuning.postingsWalk,
    );
    if (ids) return { count, rows: await rowsOf(db, spec.table, ids.slice(offset)) };
  }
  // The rows the walk expects to check, times the matches.
  const walkCost = async () => (offset + request.pageSize) * (await total());
  if (
    plan.indexed &&
    !preloaded &&
    offset < DEFERRED_JOIN_OFFSET &&
    walksOrderIndex(request.order) &&
    (await walkCost()) <= tuning.walkRows * count &&
    // The token index reads a match again for a small part of a row checked: only a walk over
    // few rows for many matches is worth it (tuning.rowCheckCost).
    (!plan.cheapReads || (await walkCost()) * tuning.rowCheckCost <= count * count)
  ) {
    // Too many matches to preload, and enough that the page fills soon: walking the order's index
    // and checking rows with the scan's predicate costs less than reading every match again.
    const rows = await walkPage(db, spec, request, offset, count, tuning);
    if (rows) return { count, rows };
  }
  const page = { ...request, plan, preloaded, rowsBefore: offset + request.pageSize, count, total };
  const walk = await pageWalks(page);
  const read = (): Promise<Row[]> => {
    const filtered = db(spec.table);
    narrowPage(filtered, page, walk);
    const deep = !preloaded && offset >= DEFERRED_JOIN_OFFSET;
    return pageRows(db, spec.table, filtered, request.order, { limit: request.pageSize, offset }, deep || idsFirst(db, plan, walk));
  };
  return { count, rows: await limitedIf(pageVisitsAll(db, plan, preloaded, walk), costly, read) };
}

/** A cursor page of the records holding every term, past `request.after`. */
export async function seekMatches(ctx: SearchContext, db: Db, spec: TableSpec, request: SeekRequest, costly: Costly): Promise<Row[]> {
  const { tuning } = ctx;
  const plan = await planSearch(db, spec, request.terms, tuning);
  const total = once(() => countAll(db, spec.table));
  const order = request.backward ? reversed(request.order) : request.order;
  // Past a boundary, the page is read among the matches (SQL applies the boundary): no need to sort them.
  const preloaded = await preloadMatches(db, spec.table, plan, request.filters, total, tuning, request.after ? undefined : order);
  if (preloaded?.ids.length === 0) return []; // exact: there is no row to read
  if (preloaded?.inOrder) {
    const rows = await rowsOf(db, spec.table, preloaded.ids.slice(0, request.limit));
    return request.backward ? rows.reverse() : rows;
  }
  if (plan.members && !preloaded && !request.filters.length && walksOrderIndex(order)) {
    // Many matches from the postings: the order's index walked from the cursor, each id tested.
    const ids = await walkMembers(
      db,
      spec.table,
      order,
      plan.members,
      request.limit,
      plan.members.size,
      await total(),
      tuning.postingsWalk,
      request.after as Knex.Value[] | undefined,
    );
    if (ids) {
      const rows = await rowsOf(db, spec.table, ids);
      return request.backward ? rows.reverse() : rows;
    }
  }
  // Made after the plan's lookups: a statement's share of the budget is what is left as it is
  // made. Without a count, a walk is chosen from the preloaded matches only, or from the index's
  // count where it costs little and no filter narrows the matches further.
  const cheapCount = plan.cheapReads && plan.count && !request.filters.length ? plan.count : undefined;
  const count = preloaded?.ids.length ?? (cheapCount ? await cheapCount() : 0);
  const page = { ...request, order, plan, preloaded, rowsBefore: request.limit, count, total };
  const walk = await pageWalks(page);
  const read = () => {
    const query = db(spec.table);
    narrowPage(query, page, walk);
    if (request.after) applyAfter(query, order, request.after as Knex.Value[], isMysql(db));
    return pageRows(db, spec.table, query, order, { limit: request.limit, offset: 0 }, idsFirst(db, plan, walk));
  };
  const rows = await limitedIf(pageVisitsAll(db, plan, preloaded, walk), costly, read);
  return request.backward ? rows.reverse() : rows;
}

/** SQLite, a page of matches looked up rather than walked: sort their keys, then read the page's rows. */
function idsFirst(db: Db, plan: SearchPlan, walk: boolean): boolean {
  return !isMysql(db) && plan.indexed && !walk;
}

/**
 * On MySQL a search's statement that visits every match runs through the search limiter, and is
 * made once admitted, so its share of the deadline is what is left then.
 */
function limitedIf<T>(visitsAll: boolean, costly: Costly, work: () => Promise<T>): Promise<T> {
  return visitsAll ? costly(work) : work();
}

/** A page of matches neither preloaded nor walked along the order's index: InnoDB FULLTEXT visits them all. */
function pageVisitsAll(db: Db, plan: SearchPlan, preloaded: PreloadedMatches | undefined, walk: boolean): boolean {
  return isMysql(db) && plan.indexed && !preloaded && !walk;
}

/**
 * The page by the scan's predicate along the order's index, within its first walkRows entries
 * (a term whose matches are all old would otherwise be walked to the end). Undefined when the
 * page did not fill within them.
 */
async function walkPage(
  db: Db,
  spec: TableSpec,
  request: ListRequest,
  offset: number,
  count: number,
  tuning: SearchTuning,
): Promise<Row[] | undefined> {
  const mysql = isMysql(db);
  const edgeQuery = db(spec.table).select(request.order.map((k) => k.column));
  applyOrder(edgeQuery, request.order, mysql);
  const edge = (await edgeQuery.offset(tuning.walkRows).first()) as Record<string, Knex.Value> | undefined;
  const walk = db(spec.table);
  applySearch(walk, spec.searchFields, request.terms, await foldCollation(db));
  applyFilters(walk, request.filters);
  // Before the edge in the order: after it, walking back.
  if (edge)
    applyAfter(
      walk,
      reversed(request.order),
      request.order.map((k) => edge[k.column]),
      mysql,
    );
  applyOrder(walk, request.order, mysql);
  const rows = (await walk.select('*').limit(request.pageSize).offset(offset)) as Row[];
  return rows.length === request.pageSize || !edge || offset + rows.length >= count ? rows : undefined;
}

/** A value computed at most once, when first asked for. */
function once<T>(compute: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= compute());
}

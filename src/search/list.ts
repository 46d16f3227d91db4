// The list pipeline for a search (filter → order → paginate): the exact set of matching ids from
// the sets (sets/matches.ts), narrowed by the filters, then a page of it in the list's order.
import { setImmediate } from 'node:timers/promises';
import type { Knex } from 'knex';
import { RoaringBitmap32 } from 'roaring';
import { type Db, inTransaction, isMysql, readerOf, withDeadline } from '../db/connection';
import { countAll } from '../db/counts';
import { applyFilters, type Filter } from '../db/filters';
import { applyAfter, reversed } from '../db/keyset';
import { applyOrder, orderIndexName, type OrderKey } from '../db/order';
import type { ListRequest, ListResult, Row, SeekRequest, TableSpec } from '../db/pages';
import { rowsOf } from '../db/pages';
import type { Costly, SearchLimiter } from './limiter';
import { idsIn } from './sets/ids';
import { matchingIds } from './sets/matches';
import type { SearchTuning } from './tuning';

/** What a search's list needs besides the request: its engine's tuning and limiter. */
export interface SearchContext {
  tuning: SearchTuning;
  limiter: SearchLimiter;
}

/**
 * A search's statements share one deadline and one snapshot (a read transaction: the sets, the
 * pending ids and the rows as of one moment); the costly ones go through the search limiter.
 */
export function searching<T>(ctx: SearchContext, pool: Db, work: (db: Db, costly: Costly) => Promise<T>): Promise<T> {
  const { db: timed, until } = withDeadline(readerOf(pool));
  return ctx.limiter.search(until, (costly) => inSnapshot(timed, (db) => work(db, costly)));
}

/** Runs `work` in one read snapshot: a transaction of its own unless `db` already is one (an export's). */
export function inSnapshot<T>(db: Db, work: (db: Db) => Promise<T>): Promise<T> {
  if (inTransaction(db)) return work(db);
  // REPEATABLE READ whatever the server's default: every read sees the first one's snapshot.
  if (isMysql(db)) return db.transaction((trx) => work(trx), { isolationLevel: 'repeatable read' });
  // SQLite: a read transaction on WAL is one snapshot from its first read. Searches waiting for
  // the connection take it one after another in promise callbacks: each first lets the event
  // loop read the requests that came meanwhile (an in-memory database runs on this thread).
  return db.transaction(async (trx) => {
    await setImmediate();
    return work(trx);
  });
}

/** A page of the records holding every term and passing the filters, and their exact count. */
export async function listMatches(ctx: SearchContext, db: Db, spec: TableSpec, request: ListRequest, costly: Costly): Promise<ListResult> {
  const ids = await matchesOf(ctx, db, spec, request.terms, request.filters, costly);
  const count = ids.size;
  const offset = (request.page - 1) * request.pageSize;
  if (request.page > 1 && offset >= count) return { count, pastEnd: true };
  const page = await pageOf(ctx, db, spec.table, ids, request.order, { offset, limit: request.pageSize }, costly);
  return { count, rows: await rowsOf(db, spec.table, page) };
}

/** A cursor page of the records holding every term and passing the filters, past `request.after`. */
export async function seekMatches(ctx: SearchContext, db: Db, spec: TableSpec, request: SeekRequest, costly: Costly): Promise<Row[]> {
  const ids = await matchesOf(ctx, db, spec, request.terms, request.filters, costly);
  const order = request.backward ? reversed(request.order) : request.order;
  const after = request.after as Knex.Value[] | undefined;
  const page = await pageOf(ctx, db, spec.table, ids, order, { offset: 0, limit: request.limit, after }, costly);
  const rows = await rowsOf(db, spec.table, page);
  return request.backward ? rows.reverse() : rows;
}

/** The ids of the records holding every term and passing every filter: exact, in the snapshot. */
async function matchesOf(
  ctx: SearchContext,
  db: Db,
  spec: TableSpec,
  terms: readonly string[],
  filters: readonly Filter[],
  costly: Costly,
): Promise<RoaringBitmap32> {
  const ids = await matchingIds(db, spec.table, spec.searchFields, terms, {
    check: (n, work) => (n > ctx.tuning.checkedInline ? costly(work) : work()),
  });
  if (!filters.length || ids.isEmpty) return ids;
  // Few matches: checked by id; many: the filters' ids read (through their index where there is
  // one), and the two intersected.
  if (ids.size <= ctx.tuning.inList) {
    const query = db(spec.table).whereRaw(idsIn(ids));
    applyFilters(query, filters);
    return RoaringBitmap32.from(await pluckIds(query));
  }
  const query = db(spec.table);
  applyFilters(query, filters);
  return RoaringBitmap32.and(ids, RoaringBitmap32.from(await costly(() => pluckIds(query))));
}

interface PageSpan {
  offset: number;
  limit: number;
  /** The order's values of the row the page starts after (a cursor). */
  after?: Knex.Value[];
}

/**
 * The ids of a page of `ids` in `order`. By id: a slice of the set. Else, with many matches, the
 * order's index walked testing each id in the set (the page fills near its start); with few,
 * the matches sorted by the database.
 */
async function pageOf(
  ctx: SearchContext,
  db: Db,
  table: string,
  ids: RoaringBitmap32,
  order: readonly OrderKey[],
  span: PageSpan,
  costly: Costly,
): Promise<number[]> {
  if (ids.isEmpty) return [];
  if (order.length === 1 && order[0].column === 'id') return sliceById(ids, order[0].desc, span);
  const wanted = span.offset + span.limit;
  const total = await countAll(db, table);
  if (ids.size > ctx.tuning.inList) return walkOrder(db, table, ids, order, span, total, costly);
  // Expected entries of the order a walk passes before the page ends, against sorting them all.
  const expected = (wanted * total) / ids.size;
  if (walksOrderIndex(order) && expected <= ctx.tuning.walkPerMatch * ids.size)
    return walkOrder(db, table, ids, order, span, total, costly);
  const query = db(table).select('id').whereRaw(idsIn(ids));
  if (span.after) applyAfter(query, order, span.after, isMysql(db));
  applyOrder(query, order, isMysql(db));
  const sort = () => pluckIds(query.limit(span.limit).offset(span.offset));
  return ids.size > ctx.tuning.checkedInline ? costly(sort) : sort();
}

function sliceById(ids: RoaringBitmap32, desc: boolean, span: PageSpan): number[] {
  const out: number[] = [];
  const bound = span.after ? Number(span.after[0]) : undefined;
  // Ranks are 0-based positions in increasing order; `rank(x)` counts the ids up to x.
  let rank = desc
    ? (bound === undefined ? ids.size - 1 : ids.rank(bound - 1) - 1) - span.offset
    : (bound === undefined ? 0 : ids.rank(bound)) + span.offset;
  for (let n = 0; n < span.limit && rank >= 0 && rank < ids.size; n++, rank += desc ? -1 : 1) out.push(ids.select(rank)!);
  return out;
}

/** The default order (or its reverse), which every record table's created_at index serves. */
function walksOrderIndex(order: readonly OrderKey[]): boolean {
  return order.length === 2 && order[0].column === 'created_at' && order[1].column === 'id' && order[0].desc === order[1].desc;
}

/** Order entries read by a walk's first statement at least, and by any at most. */
const WALK_CHUNK = { min: 256, max: 32_768 };

/**
 * Walks the table in `order` from the cursor, in chunks of ids, keeping those in the set, until
 * the page is full. Chunks grow as they find few: the first is sized for matches spread evenly.
 */
async function walkOrder(
  db: Db,
  table: string,
  ids: RoaringBitmap32,
  order: readonly OrderKey[],
  span: PageSpan,
  total: number,
  costly: Costly,
): Promise<number[]> {
  const mysql = isMysql(db);
  const wanted = span.offset + span.limit;
  let chunk = Math.min(WALK_CHUNK.max, Math.max(WALK_CHUNK.min, Math.ceil((2 * wanted * total) / ids.size)));
  const columns = [...new Set([...order.map((k) => k.column), 'id'])];
  const found: number[] = [];
  let last = span.after;
  for (let walked = 0; ;) {
    // MySQL: told to, it walks the created_at index rather than sorting the table.
    const from = mysql && walksOrderIndex(order) ? db.raw('?? FORCE INDEX (??)', [table, orderIndexName(table)]) : table;
    const query = db.from(from).select(columns);
    if (last) applyAfter(query, order, last, mysql);
    applyOrder(query, order, mysql);
    const read = () => query.limit(chunk) as Promise<Record<string, Knex.Value>[]>;
    // Past the first chunks a walk passes many entries per match: it waits its turn.
    const rows = walked > WALK_CHUNK.max ? await costly(read) : await read();
    walked += rows.length;
    for (const r of rows) if (ids.has(Number(r.id)) && found.push(Number(r.id)) === wanted) return found.slice(span.offset);
    if (rows.length < chunk) return found.slice(span.offset);
    const end = rows[rows.length - 1];
    last = order.map((k) => end[k.column]);
    chunk = Math.min(WALK_CHUNK.max, chunk * 2);
  }
}

async function pluckIds(query: Knex.QueryBuilder): Promise<number[]> {
  return ((await query.pluck('id')) as (number | string)[]).map(Number);
}

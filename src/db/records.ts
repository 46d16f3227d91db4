import type { Knex } from 'knex';
import { type Db, inTransaction, isMysql, withDeadline } from './connection';
import { countAll } from './counts';
import { applyFilters, type Filter } from './filters';
import { applyAfter, reversed } from './keyset';
import { type PreloadedMatches, preloadMatches, narrowPage, narrowToMatches, pageWalks, walksOrderIndex } from './matches';
import { applyOrder, type OrderKey } from './order';
import { applySearch, foldCollation } from './search';
import { type Costly, inline, searchLimiter } from './searchGate';
import { inSearchSnapshot, planSearch, type SearchPlan } from './searchIndex';
import { searchTuning } from './searchTuning';
import { compiledRows, PARAM } from './statements';
import { pendingWritten } from './indexer';
import { indexedFields } from './wordIndex';

/** The pool, or a transaction on it. */
export type Queryable = Db | Knex.Transaction;
export type Row = Record<string, unknown> & { id: number | string; version: number };
export type Values = Record<string, unknown>;

export interface TableSpec {
  table: string;
  searchFields: readonly string[];
}

export interface ListRequest {
  terms: readonly string[];
  filters: readonly Filter[];
  order: readonly OrderKey[];
  page: number;
  pageSize: number;
}

/** From this offset on, a page is read as ids first (see listRecords). */
const DEFERRED_JOIN_OFFSET = 100;

export type ListResult = { count: number; rows: Row[] } | { count: number; pastEnd: true };

/** The list pipeline's database steps: filter, order, paginate (serializing is the caller's). */
export async function listRecords(pool: Db, spec: TableSpec, request: ListRequest): Promise<ListResult> {
  return onPoolOrSearching(pool, spec, request.terms, (db, costly) => listIn(db, spec, request, costly));
}

/**
 * A search's statements share one deadline and one snapshot (inSearchSnapshot); on MySQL those
 * that visit every match go through the search limiter (searchGate.ts). The rest run on the pool.
 */
function onPoolOrSearching<T>(
  pool: Db,
  spec: TableSpec,
  terms: readonly string[],
  work: (db: Db, costly: Costly) => Promise<T>,
): Promise<T> {
  if (!terms.length) return work(pool, inline);
  const { db: timed, until } = withDeadline(pool);
  return searchLimiter.search(until, (costly) => inSearchSnapshot(timed, spec.table, (db) => work(db, costly)));
}

async function listIn(db: Db, spec: TableSpec, request: ListRequest, costly: Costly): Promise<ListResult> {
  const plan = await planSearch(db, spec, request.terms);
  const total = once(() => countAll(db, spec.table));
  const preloaded = await preloadMatches(db, spec.table, plan, request.filters, total, request.order);
  // On MySQL a search's count visits every match (InnoDB FULLTEXT, or the rows through the
  // scan's predicate or the filters) unless they are preloaded or the dense words' lists count them.
  const visitsAll = isMysql(db) && request.terms.length > 0 && !preloaded;
  const counted = () => countRows(narrowToMatches(db(spec.table), plan, request.filters));
  const count = preloaded
    ? preloaded.ids.length
    : !request.terms.length && !request.filters.length
      ? await total()
      : plan.count && !request.filters.length
        ? // The index holds exactly the table's rows: a common term costs no visit to them.
          await limitedIf(visitsAll && plan.indexed, costly, plan.count)
        : await limitedIf(visitsAll, costly, counted);
  const offset = (request.page - 1) * request.pageSize;
  if (request.page > 1 && offset >= count) return { count, pastEnd: true };
  if (!count) return { count, rows: [] }; // exact: there is no row to read
  if (preloaded?.inOrder) return { count, rows: await rowsOf(db, spec.table, preloaded.ids.slice(offset, offset + request.pageSize)) };

  // The rows the walk expects to check, times the matches.
  const walkCost = async () => (offset + request.pageSize) * (await total());
  if (
    plan.indexed &&
    !preloaded &&
    offset < DEFERRED_JOIN_OFFSET &&
    walksOrderIndex(request.order) &&
    (await walkCost()) <= searchTuning.walkRows * count &&
    // The token index reads a match again for a small part of a row checked: only a walk over
    // few rows for many matches is worth it (searchTuning.rowCheckCost).
    (!plan.cheapReads || (await walkCost()) * searchTuning.rowCheckCost <= count * count)
  ) {
    // Too many matches to preload, and enough that the page fills soon: walking the order's index
    // and checking rows with the scan's predicate costs less than reading every match again.
    const rows = await walkPage(db, spec, request, offset, count);
    if (rows) return { count, rows };
  }
  const page = { ...request, plan, preloaded, rowsBefore: offset + request.pageSize, count, total };
  const walk = await pageWalks(page);
  const read = (): Promise<Row[]> => {
    const filtered = db(spec.table);
    narrowPage(filtered, page, walk);
    // Deep pages: skip over ids only (an index-only scan for the default order). Skipping whole
    // rows made MySQL scan and sort the table.
    const deep = !preloaded && offset >= DEFERRED_JOIN_OFFSET;
    return pageRows(db, spec.table, filtered, request.order, { limit: request.pageSize, offset }, deep || idsFirst(db, plan, walk));
  };
  return { count, rows: await limitedIf(pageVisitsAll(db, plan, preloaded, walk), costly, read) };
}

/** SQLite, a page of matches looked up rather than walked: sort their keys, then read the page's rows. */
function idsFirst(db: Db, plan: SearchPlan, walk: boolean): boolean {
  return !isMysql(db) && plan.indexed && !walk;
}

/**
 * A page of `query` (narrowed to the matches) in `order`. `idsFirst`: ids first, then rows by
 * primary key, so rows passed over or sorted are read for their keys only.
 */
async function pageRows(
  db: Db,
  table: string,
  query: Knex.QueryBuilder,
  order: readonly OrderKey[],
  page: { limit: number; offset: number },
  idsFirst: boolean,
): Promise<Row[]> {
  const mysql = isMysql(db);
  applyOrder(query, order, mysql);
  query.limit(page.limit).offset(page.offset);
  if (!idsFirst) return (await query.select('*')) as Row[];
  if (mysql) return rowsOf(db, table, (await query.pluck('id')) as (number | string)[]);
  // One statement: SQLite takes a LIMIT in an IN subquery (MySQL does not).
  const rows = db(table).select('*').whereIn('id', query.select('id'));
  applyOrder(rows, order, false);
  return (await rows) as Row[];
}

/**
 * On MySQL a search's statement that visits every match runs through the search limiter
 * (searchGate.ts), and is made once admitted, so its share of the deadline is what is left then.
 */
function limitedIf<T>(visitsAll: boolean, costly: Costly, work: () => Promise<T>): Promise<T> {
  return visitsAll ? costly(work) : work();
}

/** A page of matches neither preloaded nor walked along the order's index: InnoDB FULLTEXT visits them all. */
function pageVisitsAll(db: Db, plan: SearchPlan, preloaded: PreloadedMatches | undefined, walk: boolean): boolean {
  return isMysql(db) && plan.indexed && !preloaded && !walk;
}

/** The rows of these ids, in their order. */
async function rowsOf(db: Db, table: string, ids: readonly (number | string)[]): Promise<Row[]> {
  const rows = ids.length ? ((await db(table).whereIn('id', [...ids])) as Row[]) : [];
  const position = new Map(ids.map((id, i) => [Number(id), i]));
  return rows.sort((a, b) => position.get(Number(a.id))! - position.get(Number(b.id))!);
}

/**
 * The page by the scan's predicate along the order's index, within its first walkRows entries
 * (a term whose matches are all old would otherwise be walked to the end). Undefined when the
 * page did not fill within them.
 */
async function walkPage(db: Db, spec: TableSpec, request: ListRequest, offset: number, count: number): Promise<Row[] | undefined> {
  const mysql = isMysql(db);
  const edgeQuery = db(spec.table).select(request.order.map((k) => k.column));
  applyOrder(edgeQuery, request.order, mysql);
  const edge = (await edgeQuery.offset(searchTuning.walkRows).first()) as Record<string, Knex.Value> | undefined;
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

async function countRows(query: Knex.QueryBuilder): Promise<number> {
  const [{ n }] = await query.count<{ n: number | string }[]>({ n: '*' });
  return Number(n);
}

export interface SeekRequest {
  terms: readonly string[];
  filters: readonly Filter[];
  /** The order, ending with a unique key. */
  order: readonly OrderKey[];
  /** Values of the order's keys in the boundary row; rows strictly beyond it are returned. */
  after?: readonly unknown[];
  /** Walk the order backwards from the boundary (for a "previous" page). */
  backward: boolean;
  limit: number;
}

/**
 * Cursor pagination's query: filter, then seek past the boundary with an index-friendly
 * condition instead of an OFFSET. Rows come in the order's direction even when walking back.
 */
export async function seekRecords(pool: Db, spec: TableSpec, request: SeekRequest): Promise<Row[]> {
  // A first page with no search or filter (the statement every cursor walk starts with): its
  // SQL depends on the order and the limit only, and is compiled once.
  if (!request.terms.length && !request.filters.length && !request.after) {
    const order = request.backward ? reversed(request.order) : request.order;
    const key = `seek ${spec.table} ${JSON.stringify(order)} ${request.limit}`;
    const found = await compiledRows<Row>(pool, key, (q) => {
      const query = q(spec.table);
      applyOrder(query, order, isMysql(pool));
      return query.select('*').limit(request.limit);
    });
    return request.backward ? found.reverse() : found;
  }
  return onPoolOrSearching(pool, spec, request.terms, (db, costly) => seekIn(db, spec, request, costly));
}

async function seekIn(db: Db, spec: TableSpec, request: SeekRequest, costly: Costly): Promise<Row[]> {
  const plan = await planSearch(db, spec, request.terms);
  const total = once(() => countAll(db, spec.table));
  const order = request.backward ? reversed(request.order) : request.order;
  // Past a boundary, the page is read among the matches (SQL applies the boundary): no need to sort them.
  const preloaded = await preloadMatches(db, spec.table, plan, request.filters, total, request.after ? undefined : order);
  if (preloaded?.ids.length === 0) return []; // exact: there is no row to read
  if (preloaded?.inOrder) {
    const rows = await rowsOf(db, spec.table, preloaded.ids.slice(0, request.limit));
    return request.backward ? rows.reverse() : rows;
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

export async function findRecord(db: Queryable, table: string, id: number): Promise<Row | undefined> {
  const [row] = await compiledRows<Row>(db, `find ${table}`, (q) => q(table).where({ id: PARAM }).first(), [id]);
  return row;
}

/**
 * Inserts a row and returns it as stored: the values, its id, and version 1.
 * No read-back: the columns store the values as given (the serializer formats them).
 */
export async function insertRecord(db: Queryable, table: string, values: Values): Promise<Row> {
  const [id] = await db(table).insert(values);
  wordsChanged(db, table);
  return { ...values, id: Number(id), version: 1 };
}

/**
 * Inserts rows with one statement (the triggers still run per row) and returns them as stored,
 * in order. Their ids are consecutive in steps of auto_increment_increment on MySQL (Galera sets
 * it to the cluster's size): one INSERT ... VALUES of known length takes its ids at once. SQLite,
 * one writer, numbers them in a row up to the last.
 */
export async function insertRows(db: Queryable, table: string, rows: readonly Values[]): Promise<Row[]> {
  const [id] = await db(table).insert(rows);
  wordsChanged(db, table);
  let first = Number(id) - (rows.length - 1);
  let step = 1;
  if (isMysql(db)) {
    first = Number(id);
    const [[{ increment }]] = (await db.raw('SELECT @@auto_increment_increment AS increment')) as [[{ increment: number }]];
    step = Number(increment);
  }
  return rows.map((values, i) => ({ ...values, id: first + i * step, version: 1 }));
}

/**
 * Which versions a conditional write accepts (If-Match `versions`, If-None-Match `except`).
 * The check is part of the UPDATE/DELETE, so of concurrent writers with one version, one wins.
 */
export type VersionCondition = { versions?: readonly number[]; except?: readonly number[] | '*' };

function accepts(condition: VersionCondition, version: number): boolean {
  if (condition.versions && !condition.versions.includes(version)) return false;
  return condition.except !== '*' && !condition.except?.includes(version);
}

/** The write's WHERE for its condition; false when no version passes, so nothing need run. */
function restrict(query: Knex.QueryBuilder, condition: VersionCondition): boolean {
  if (condition.except === '*') return false;
  if (condition.versions) query.whereIn('version', [...condition.versions]);
  if (condition.except?.length) query.whereNotIn('version', [...condition.except]);
  return true;
}

/**
 * Returns the updated row, or undefined when no record has this id (and accepted version). A read
 * then a write conditioned on the version read is cheaper than a transaction's four round trips;
 * a transaction remains for a write that lands between the two.
 */
export async function updateRecord(
  db: Queryable,
  table: string,
  id: number,
  values: Values,
  condition: VersionCondition = {},
): Promise<Row | undefined> {
  const row = inTransaction(db) ? await updateLocked(db, table, id, values, condition) : await updateRead(db, table, id, values, condition);
  if (row) wordsChanged(db, table);
  return row;
}

async function updateRead(db: Db, table: string, id: number, values: Values, condition: VersionCondition): Promise<Row | undefined> {
  const before = await findRecord(db, table, id);
  if (!before) return undefined;
  if (!accepts(condition, before.version)) return undefined;
  const version = before.version + 1;
  const changed = await db(table)
    .where({ id, version: before.version })
    .update({ ...values, version });
  if (changed) return { ...before, ...values, version };
  return db.transaction((trx) => updateLocked(trx, table, id, values, condition));
}

/** The update inside a transaction: the write, then the read-back. */
async function updateLocked(
  db: Knex.Transaction,
  table: string,
  id: number,
  values: Values,
  condition: VersionCondition,
): Promise<Row | undefined> {
  const query = db(table).where({ id });
  if (!restrict(query, condition)) return undefined;
  const changed = await query.update({ ...values, version: db.raw('?? + 1', ['version']) });
  if (!changed) return undefined;
  return findRecord(db, table, id);
}

/**
 * Tells the background indexer this write may have left a record pending in MySQL's word index
 * (only the indexer writes it: wordIndex.ts says why); SQLite's triggers index in the write itself.
 */
function wordsChanged(db: Queryable, table: string): void {
  if (isMysql(db) && indexedFields(table)) pendingWritten(table);
}

export async function deleteRecord(db: Queryable, table: string, id: number, condition: VersionCondition = {}): Promise<boolean> {
  const query = db(table).where({ id });
  if (!restrict(query, condition)) return false;
  const deleted = (await query.delete()) > 0;
  if (deleted) wordsChanged(db, table);
  return deleted;
}

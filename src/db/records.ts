import type { Db } from './connection';
import { applySearch, foldCollation } from './search';

export type Row = Record<string, unknown> & { id: number | string };
export type Values = Record<string, unknown>;

export interface TableSpec {
  table: string;
  searchFields: readonly string[];
}

export interface ListRequest {
  terms: readonly string[];
  page: number;
  pageSize: number;
}

export type ListResult = { count: number; rows: Row[] } | { count: number; pastEnd: true };

/** The list pipeline's database steps: filter, order, paginate (serializing is the caller's). */
export async function listRecords(db: Db, spec: TableSpec, request: ListRequest): Promise<ListResult> {
  const filtered = db(spec.table);
  if (request.terms.length) applySearch(filtered, spec.searchFields, request.terms, await foldCollation(db));

  const [{ n }] = await filtered.clone().count({ n: '*' });
  const count = Number(n);
  const offset = (request.page - 1) * request.pageSize;
  if (request.page > 1 && offset >= count) return { count, pastEnd: true };

  // Newest first; id breaks ties so that pages are stable. Served by the (created_at, id) index.
  const rows = await filtered
    .select('*')
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(request.pageSize)
    .offset(offset);
  return { count, rows };
}

export async function findRecord(db: Db, table: string, id: number): Promise<Row | undefined> {
  return db(table).where({ id }).first();
}

export async function insertRecord(db: Db, table: string, values: Values): Promise<Row> {
  const [id] = await db(table).insert(values);
  const row = await findRecord(db, table, Number(id));
  if (!row) throw new Error(`inserted ${table} row ${id} was not found`);
  return row;
}

/** Returns the updated row, or undefined when no record has this id. */
export async function updateRecord(db: Db, table: string, id: number, values: Values): Promise<Row | undefined> {
  const changed = await db(table).where({ id }).update(values);
  return changed ? findRecord(db, table, id) : undefined;
}

export async function deleteRecord(db: Db, table: string, id: number): Promise<boolean> {
  return (await db(table).where({ id }).delete()) > 0;
}

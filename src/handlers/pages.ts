import type { Db } from '../db/connection';
import { listRows, type ListRequest, type ListResult, type Row, type SeekRequest, seekRows, type TableSpec } from '../db/records';
import { type Seek, walkRecords as walkRows, walkSnapshot as walkRowsSnapshot, type WalkOptions, type WalkRequest } from '../db/walk';
import type { Search } from '../search';

// The list pipeline's one choice: a list with search terms is search's to answer, any other the
// database's plain list. Search sits on src/db; src/db knows nothing of search.

/** A page of a list, and its exact count. */
export function listRecords(pool: Db, spec: TableSpec, request: ListRequest, search: Search): Promise<ListResult> {
  return request.terms.length ? search.list(pool, spec, request) : listRows(pool, spec, request);
}

/** A cursor page of a list. */
export function seekRecords(pool: Db, spec: TableSpec, request: SeekRequest, search: Search): Promise<Row[]> {
  return request.terms.length ? search.seek(pool, spec, request) : seekRows(pool, spec, request);
}

const seekWith =
  (search: Search): Seek =>
  (pool, spec, request) =>
    seekRecords(pool, spec, request, search);

/** Every row a list matches, in its order, a batch at a time (src/db/walk.ts). */
export function walkRecords(db: Db, search: Search, spec: TableSpec, request: WalkRequest, options?: WalkOptions): AsyncGenerator<Row> {
  return walkRows(db, seekWith(search), spec, request, options);
}

/** walkRecords inside one read snapshot (exports). */
export function walkSnapshot(db: Db, search: Search, spec: TableSpec, request: WalkRequest, options?: WalkOptions): AsyncGenerator<Row> {
  return walkRowsSnapshot(db, seekWith(search), spec, request, options);
}

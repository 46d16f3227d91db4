import type { OrderKey } from '../../src/db/order';
import type { Db } from '../../src/db/connection';
import { pendingTable } from '../../src/search/sets/indexer';
import { applySearch, foldCollation } from '../../src/search/predicate';

/** The ids the plain scan finds for these terms, newest first: what indexed search must equal. */
export async function scannedIds(db: Db, table: string, fields: readonly string[], terms: readonly string[]): Promise<number[]> {
  const scan = db(table);
  applySearch(scan, fields, terms, await foldCollation(db));
  const ids = await scan
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .pluck('id');
  return (ids as (number | string)[]).map(Number);
}

/** Records the sets do not hold yet (checked with the scan's predicate meanwhile). */
export async function pendingCount(db: Db, table: string): Promise<number> {
  const [{ n }] = await db(pendingTable(table)).count({ n: '*' });
  return Number(n);
}

/** The default order, newest first (what scannedIds gives), as the list pipeline takes it. */
export const NEWEST_FIRST = [
  { column: 'created_at', desc: true },
  { column: 'id', desc: true },
] as unknown as OrderKey[];

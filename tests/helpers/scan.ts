import type { Db } from '../../src/db/connection';
import { applySearch, foldCollation } from '../../src/db/search';

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

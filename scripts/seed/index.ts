import { migrate } from '../../src/schema';
import { type Db, isMysql } from '../../src/db/connection';
import { recount } from '../../src/db/counts';
import { emptyIndex, indexLoaded } from '../../src/search';
import { type CollectionName, rowSource } from './data';
import { loadRows, type LoadOptions } from './load';

export { COLLECTIONS, type CollectionName } from './data';

export const DEFAULT_SEED = 42;

export class SeedError extends Error {}

export interface SeedOptions extends Omit<LoadOptions, 'count'> {
  seed?: number;
  /** Empty the table first; without it a table that has rows is an error, never overwritten. */
  reset?: boolean;
}

export async function rowCount(db: Db, table: string): Promise<number> {
  const [{ n }] = await db(table).count({ n: '*' });
  return Number(n);
}

/** Migrates, then loads `count` generated rows (ids 1..count) into an empty collection table. */
export async function seedCollection(db: Db, table: CollectionName, count: number, options: SeedOptions = {}): Promise<void> {
  await migrate(db);
  if (options.reset) await emptyTable(db, table);
  const existing = await rowCount(db, table);
  if (existing > 0) {
    throw new SeedError(`${table} already has ${existing.toLocaleString('en')} rows; pass --reset to replace them`);
  }
  await loadRows(db, rowSource(table, count, options.seed ?? DEFAULT_SEED), { ...options, count });
  // MySQL: the loaded rows were left pending by the index's triggers; index them in batches.
  await indexLoaded(db, table);
  // The bulk load writes around the service's row counters; set them from the rows.
  await recount(db, table);
}

/** Empties a table and restarts its ids at 1, so that a seeded load is the same every time. */
export async function emptyTable(db: Db, table: string): Promise<void> {
  if (isMysql(db)) {
    await db.raw('TRUNCATE TABLE ??', [table]);
    // TRUNCATE fires no trigger: the word index is emptied with it.
    await emptyIndex(db, table);
  } else {
    await db(table).delete();
    await db.raw('DELETE FROM sqlite_sequence WHERE name = ?', [table]).catch(() => undefined);
  }
  await recount(db, table);
}

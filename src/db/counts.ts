import type { Db } from './connection';
import type { Queryable } from './pages';

/** Counter rows per table (migration 003), bumped by triggers on insert and delete (004). */
export const COUNT_SLOTS = 16;

/**
 * MySQL: the counter row bulk loads (import, seed) bump, one past the live connections' slots
 * (012): a load holds its row until it commits, and on a live slot creates waited on it.
 */
export const BULK_COUNT_SLOT = COUNT_SLOTS;

/** MySQL: the session variable that makes the count triggers use BULK_COUNT_SLOT. */
export const COUNT_SLOT_VARIABLE = '@record_count_slot';

/** The exact number of rows in a record table, without scanning it. */
export async function countAll(db: Queryable, table: string): Promise<number> {
  const [{ n }] = await db('record_counts').where({ table_name: table }).sum({ n: 'n' });
  return Number(n ?? 0);
}

/** Sets a table's count from its rows; for bulk loads that write around the counters. */
export async function recount(db: Db, table: string): Promise<void> {
  await db.transaction(async (trx) => {
    const [{ n }] = await trx(table).count({ n: '*' });
    await trx('record_counts').where({ table_name: table }).update({ n: 0 });
    await trx('record_counts')
      .where({ table_name: table, slot: 0 })
      .update({ n: Number(n) });
  });
}

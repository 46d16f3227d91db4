import type { Db } from './connection';
import type { Queryable } from './records';

/** Counter rows per table (see migration 003); a write bumps one at random. */
export const COUNT_SLOTS = 16;

/** The exact number of rows in a record table, without scanning it. */
export async function countAll(db: Queryable, table: string): Promise<number> {
  const [{ n }] = await db('record_counts').where({ table_name: table }).sum({ n: 'n' });
  return Number(n ?? 0);
}

/** Adds `delta` to a table's count; call it in the transaction that inserts or deletes. */
export async function bumpCount(trx: Queryable, table: string, delta: number): Promise<void> {
  const slot = Math.floor(Math.random() * COUNT_SLOTS);
  await trx('record_counts').where({ table_name: table, slot }).update({ n: trx.raw('?? + ?', ['n', delta]) });
}

/** Sets a table's count from its rows; for bulk loads that write around the counters. */
export async function recount(db: Db, table: string): Promise<void> {
  await db.transaction(async (trx) => {
    const [{ n }] = await trx(table).count({ n: '*' });
    await trx('record_counts').where({ table_name: table }).update({ n: 0 });
    await trx('record_counts').where({ table_name: table, slot: 0 }).update({ n: Number(n) });
  });
}

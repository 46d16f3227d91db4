import type { Knex } from 'knex';
import { isMysql } from './connection';
import { classifyDbError } from './errors';
import { deleteRecord, insertRecord, insertRows, type Queryable, type Row, type Values } from './records';

/** Where a bulk write stopped: a unique value taken at `index`, or ids that name no row. */
export class BulkRefused extends Error {
  constructor(
    readonly reason: { kind: 'unique'; index: number; field: string } | { kind: 'missing'; ids: { index: number; id: number }[] },
  ) {
    super(reason.kind === 'unique' ? `unique ${reason.field} taken at [${reason.index}]` : 'ids missing');
  }
}

/** Knex writes a multi-row INSERT on SQLite as SELECTs joined by UNION ALL, at most 500 of them. */
const ROWS_PER_INSERT = 250;

/** `work` in one transaction; inside one already (an idempotent write's), a savepoint of it. */
function atomically<T>(q: Queryable, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return q.transaction(work);
}

/**
 * Inserts `records` in order, in one transaction: all or none. One multi-row INSERT (the search
 * index's triggers and the counts still see each row); when it breaks a unique rule, the batch is
 * run again row by row, as single creates are, to name the first record at fault: a unique value
 * taken by a stored row or by an earlier record of the batch throws BulkRefused naming its index.
 */
export async function insertRecords(
  q: Queryable,
  table: string,
  records: readonly Values[],
  uniqueFields: readonly string[],
): Promise<Row[]> {
  try {
    return await atomically(q, async (trx) => {
      const rows: Row[] = [];
      for (let i = 0; i < records.length; i += ROWS_PER_INSERT)
        rows.push(...(await insertRows(trx, table, records.slice(i, i + ROWS_PER_INSERT))));
      return rows;
    });
  } catch (err) {
    if (classifyDbError(err, table, uniqueFields)?.kind !== 'unique') throw err;
  }
  return insertOneByOne(q, table, records, uniqueFields);
}

function insertOneByOne(q: Queryable, table: string, records: readonly Values[], uniqueFields: readonly string[]): Promise<Row[]> {
  return atomically(q, async (trx) => {
    const rows: Row[] = [];
    for (const [index, record] of records.entries()) {
      try {
        rows.push(await insertRecord(trx, table, record));
      } catch (err) {
        const failure = classifyDbError(err, table, uniqueFields);
        if (failure?.kind === 'unique') throw new BulkRefused({ kind: 'unique', index, field: failure.field });
        throw err;
      }
    }
    return rows;
  });
}

/**
 * Deletes the rows with `ids`, each through the single delete's path, in one transaction: all
 * or none. The ids that name no row throw BulkRefused, before anything is deleted; on MySQL the
 * rows found are locked, so none can go between the check and the deletes.
 */
export function deleteRecords(q: Queryable, table: string, ids: readonly number[]): Promise<void> {
  return atomically(q, async (trx) => {
    const query = trx(table).whereIn('id', ids).select('id');
    if (isMysql(trx)) void query.forUpdate();
    const found = new Set((await query).map((r: { id: number | string }) => Number(r.id)));
    const missing = ids.flatMap((id, index) => (found.has(id) ? [] : [{ index, id }]));
    if (missing.length) throw new BulkRefused({ kind: 'missing', ids: missing });
    for (const id of ids) {
      // Locked (MySQL) or serialized (SQLite): a row found above is still there.
      if (!(await deleteRecord(trx, table, id))) throw new BulkRefused({ kind: 'missing', ids: [{ index: ids.indexOf(id), id }] });
    }
  });
}

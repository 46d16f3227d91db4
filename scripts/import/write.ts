// Writes validated rows in one transaction, so that a failure leaves nothing written: on MySQL,
// multi-row INSERTs of about 4 MB (Node builds the next while the server stores the last), on
// SQLite one prepared statement. The count and search-index triggers run as for any write.
import type BetterSqlite3 from 'better-sqlite3';
import { escape } from 'mysql2';
import { type Db, isMysql } from '../../src/db/connection';
import { BULK_COUNT_SLOT, COUNT_SLOT_VARIABLE } from '../../src/db/counts';
import { connectionPool, type MysqlConnection, run, sqliteValues } from '../lib/pool';

export type Value = string | number | boolean | null;

export interface WriteOptions {
  table: string;
  columns: readonly string[];
  batchBytes?: number;
  onProgress?: (done: number) => void;
  /** SQLite: the caller says nothing else uses the file (no service running): write it directly (directly()). */
  exclusive?: boolean;
  /** SQLite, with `exclusive`: whether the load writes into the file directly (false: another connection has it open). */
  onDirect?: (direct: boolean) => void;
}

export async function writeRows(db: Db, rows: AsyncIterable<Value[]>, options: WriteOptions): Promise<number> {
  return isMysql(db) ? writeMysql(db, rows, options) : writeSqlite(db, rows, options);
}

async function writeMysql(db: Db, rows: AsyncIterable<Value[]>, options: WriteOptions): Promise<number> {
  const { table, columns, batchBytes = 4 * 1024 * 1024, onProgress } = options;
  const head = `INSERT INTO \`${table}\` (${columns.map((c) => `\`${c}\``).join(', ')}) VALUES `;
  const client = connectionPool<MysqlConnection>(db);
  const conn = await client.acquireConnection();
  let done = 0;
  try {
    // The count triggers bump the bulk loads' counter row, which no service connection maps to:
    // the transaction holds it to the end, and held a live slot, failing the service's creates.
    await run(conn, `SET ${COUNT_SLOT_VARIABLE} = ${BULK_COUNT_SLOT}`);
    await run(conn, 'START TRANSACTION');
    let pending: Promise<void> = Promise.resolve();
    let parts: string[] = [];
    let bytes = head.length;
    let inBatch = 0;
    const flush = async () => {
      const sql = head + parts.join(',');
      const n = inBatch;
      parts = [];
      bytes = head.length;
      inBatch = 0;
      await pending;
      pending = run(conn, sql).then(() => {
        done += n;
        onProgress?.(done);
      });
      // A failure is seen at the next flush or at the end; the catch keeps it from being unhandled meanwhile.
      pending.catch(() => undefined);
    };
    for await (const row of rows) {
      const tuple = `(${row.map((v) => (typeof v === 'number' ? String(v) : escape(v))).join(',')})`;
      parts.push(tuple);
      bytes += tuple.length + 1;
      inBatch++;
      if (bytes >= batchBytes) await flush();
    }
    if (inBatch) await flush();
    await pending;
    await run(conn, 'COMMIT');
    return done;
  } catch (err) {
    await run(conn, 'ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await run(conn, `SET ${COUNT_SLOT_VARIABLE} = NULL`).catch(() => undefined);
    await client.releaseConnection(conn);
  }
}

async function writeSqlite(db: Db, rows: AsyncIterable<Value[]>, options: WriteOptions): Promise<number> {
  const { table, columns, onProgress, exclusive, onDirect } = options;
  const client = connectionPool<BetterSqlite3.Database>(db);
  const conn = await client.acquireConnection();
  let done = 0;
  let backToWal: (() => void) | undefined;
  try {
    if (exclusive) {
      backToWal = directly(conn);
      onDirect?.(backToWal !== undefined);
    }
    const insert = conn.prepare(
      `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    );
    conn.prepare('BEGIN IMMEDIATE').run();
    try {
      for await (const row of rows) {
        insert.run(sqliteValues(row));
        if (++done % 10_000 === 0) onProgress?.(done);
      }
      conn.prepare('COMMIT').run();
    } catch (err) {
      if (conn.inTransaction) conn.prepare('ROLLBACK').run();
      throw err;
    }
    onProgress?.(done);
    return done;
  } finally {
    backToWal?.();
    await client.releaseConnection(conn);
  }
}

/**
 * With `--exclusive`, loads through a rollback journal, which writes each new page once where WAL
 * writes it twice (BENCHMARKS.md); no other connection may open the file meanwhile. Returns what
 * puts WAL back, or undefined when another connection holds the file and the load stays in WAL.
 */
function directly(conn: BetterSqlite3.Database): (() => void) | undefined {
  try {
    if (conn.pragma('journal_mode = DELETE', { simple: true }) !== 'delete') return undefined;
  } catch (err) {
    if (String((err as { code?: unknown }).code).startsWith('SQLITE_BUSY')) return undefined;
    throw err;
  }
  return () => {
    try {
      conn.pragma('journal_mode = WAL');
    } catch (err) {
      // The rows are committed; a connection of the service sets WAL as it opens (connection.ts).
      process.stderr.write(`the file stays in rollback-journal mode until the service opens it: ${(err as Error).message}\n`);
    }
  };
}

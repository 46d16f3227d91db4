// Writes generated rows into an empty table as fast as each database allows: on MySQL, large
// multi-row INSERTs on several connections at once (so Node builds the next batch while the
// server stores the last); on SQLite, one prepared statement in large transactions.
import type BetterSqlite3 from 'better-sqlite3';
import { escape } from 'mysql2';
import { type Db, isMysql } from '../../src/db/connection';
import type { RowSource } from './data';
import { connectionPool, type MysqlConnection, run, sqliteValues } from '../lib/pool';

export interface LoadOptions {
  count: number;
  /** Flush a MySQL batch at about this many bytes of SQL (keep below max_allowed_packet). */
  batchBytes?: number;
  /** MySQL connections inserting at once. */
  parallel?: number;
  onProgress?: (done: number) => void;
}

export async function loadRows(db: Db, source: RowSource, options: LoadOptions): Promise<void> {
  if (isMysql(db)) await loadMysql(db, source, options);
  else await loadSqlite(db, source, options);
}

async function loadMysql(db: Db, source: RowSource, options: LoadOptions): Promise<void> {
  const { count, batchBytes = 4 * 1024 * 1024, parallel = 2, onProgress } = options;
  const head = `INSERT INTO \`${source.table}\` (${source.columns.map((c) => `\`${c}\``).join(', ')}) VALUES `;
  const client = connectionPool<MysqlConnection>(db);
  const conns: MysqlConnection[] = [];
  for (let k = 0; k < parallel; k++) conns.push(await client.acquireConnection());
  try {
    // The loader only fills an empty table with values unique by construction (see data.ts),
    // so the server may skip checking unique indexes row by row and merge them in bulk.
    for (const conn of conns) await run(conn, 'SET SESSION unique_checks = 0, foreign_key_checks = 0');
    const idle = [...conns];
    const busy = new Set<Promise<void>>();
    let failure: Error | undefined;
    let done = 0;
    let i = 0;
    while (i < count && failure === undefined) {
      const parts: string[] = [];
      let bytes = head.length;
      const first = i;
      while (i < count && bytes < batchBytes) {
        const tuple = `(${source
          .row(i)
          .map((v) => (typeof v === 'number' ? String(v) : typeof v === 'boolean' ? (v ? '1' : '0') : escape(v)))
          .join(',')})`;
        parts.push(tuple);
        bytes += tuple.length + 1;
        i++;
      }
      while (!idle.length) await Promise.race(busy);
      const conn = idle.pop()!;
      const rows = i - first;
      // One multi-row INSERT is one transaction: all of its rows or none.
      const job: Promise<void> = run(conn, head + parts.join(','))
        .then(() => {
          done += rows;
          onProgress?.(done);
        })
        .catch((err: Error) => {
          failure ??= err;
        })
        .finally(() => {
          busy.delete(job);
          idle.push(conn);
        });
      busy.add(job);
    }
    await Promise.all(busy);
    if (failure !== undefined) throw failure;
  } finally {
    for (const conn of conns) {
      await run(conn, 'SET SESSION unique_checks = 1, foreign_key_checks = 1').catch(() => undefined);
      await client.releaseConnection(conn);
    }
  }
}

async function loadSqlite(db: Db, source: RowSource, options: LoadOptions): Promise<void> {
  const { count, onProgress } = options;
  const client = connectionPool<BetterSqlite3.Database>(db);
  const conn = await client.acquireConnection();
  try {
    const insert = conn.prepare(
      `INSERT INTO "${source.table}" (${source.columns.map((c) => `"${c}"`).join(', ')}) VALUES (${source.columns.map(() => '?').join(', ')})`,
    );
    const batch = conn.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) insert.run(sqliteValues(source.row(i)));
    });
    for (let i = 0; i < count; i += 20_000) {
      batch(i, Math.min(count, i + 20_000));
      onProgress?.(Math.min(count, i + 20_000));
    }
  } finally {
    await client.releaseConnection(conn);
  }
}

// Bulk loads (seed, import) hold connections of their own for multi-row INSERTs and transactions
// that span many statements. knex's types declare its client as any; this is the part they use.
import type { Db } from '../../src/db/connection';

export type MysqlConnection = { query(sql: string, cb: (err: Error | null) => void): void };

/** The pool methods of knex's client, lending connections of type C. */
export interface ConnectionPool<C> {
  acquireConnection(): Promise<C>;
  releaseConnection(conn: C): Promise<unknown>;
}

export function connectionPool<C>(db: Db): ConnectionPool<C> {
  return db.client as ConnectionPool<C>;
}

/** One statement on a raw mysql2 connection. */
export function run(conn: MysqlConnection, sql: string): Promise<void> {
  return new Promise((resolve, reject) => conn.query(sql, (err) => (err ? reject(err) : resolve())));
}

/** A row's values as better-sqlite3 binds them: it refuses booleans, so 0 and 1, as knex binds them. */
export function sqliteValues(row: readonly (string | number | boolean | null)[]): (string | number | null)[] {
  return row.map((v) => (typeof v === 'boolean' ? Number(v) : v));
}

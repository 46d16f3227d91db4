import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import knex, { Knex } from 'knex';
import type { DatabaseConfig, PoolConfig } from '../config';

export type Db = Knex;

/** Where knex's own warnings go (the service's logger); messages never carry bound values. */
export interface DbLog {
  warn(message: string): void;
  error(message: string): void;
}

export const DEFAULT_POOL: PoolConfig = { size: 10, queryTimeoutMs: 5000 };
/** How long a request waits for a connection (or for one to be made) before it is answered 503. */
export const ACQUIRE_TIMEOUT_MS = 2000;

// Both dialects compare text the same way: binary collation, and LOWER() on both sides for a
// case-insensitive search. SQLite's own lower() folds ASCII only, so it is replaced by one that
// folds every alphabet, as MySQL's does: one character at a time. toLowerCase alone lowers Σ to
// ς at the end of a word, so "ΑΣ" would not contain the "σ" that a search for "Σ" becomes.
function unicodeLower(value: unknown): unknown {
  return typeof value === 'string' ? value.replace(/Σ/g, 'σ').toLowerCase() : value;
}

export function openDb(config: DatabaseConfig, pool: PoolConfig = DEFAULT_POOL, log?: DbLog): Db {
  const text = (m: unknown) => (typeof m === 'string' ? m : (m as Error)?.message ?? String(m));
  const common = {
    // Error messages keep the SQL's placeholders, never the values: those are request bodies.
    compileSqlOnError: false,
    // Without a logger, knex's own copies (printed with stacks) are muted: each error also
    // reaches the caller, which reports it.
    log: log
      ? { warn: (m: unknown) => log.warn(text(m)), error: (m: unknown) => log.error(text(m)), deprecate: () => {}, debug: () => {} }
      : { warn() {}, error() {}, deprecate() {}, debug() {} },
  };
  if (config.client === 'sqlite') {
    if (config.filename !== ':memory:') mkdirSync(dirname(config.filename), { recursive: true });
    return knex({
      ...common,
      client: 'better-sqlite3',
      connection: { filename: config.filename },
      useNullAsDefault: true,
      pool: {
        min: 1,
        max: 1,
        afterCreate(conn: any, done: (err: Error | null, conn: unknown) => void) {
          try {
            conn.pragma('journal_mode = WAL');
            conn.pragma('busy_timeout = 5000');
            conn.pragma('foreign_keys = ON');
            conn.function('lower', { deterministic: true }, unicodeLower);
            done(null, conn);
          } catch (err) {
            done(err as Error, conn);
          }
        },
      },
    });
  }
  return knex({
    ...common,
    client: 'mysql2',
    connection: {
      host: config.host,
      port: config.port,
      user: config.user,
      password: config.password,
      database: config.database,
      charset: 'utf8mb4',
      timezone: 'Z',
      // DATETIME and DATE come back as the strings they were stored as; serializers format them.
      dateStrings: true,
      supportBigNumbers: true,
      connectTimeout: ACQUIRE_TIMEOUT_MS,
    },
    pool: {
      min: 0,
      max: pool.size,
      afterCreate(conn: any, done: (err: Error | null, conn: unknown) => void) {
        conn.query(
          "SET SESSION time_zone = '+00:00', sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
          (err: Error | null) => done(err, conn),
        );
      },
    },
    acquireConnectionTimeout: ACQUIRE_TIMEOUT_MS,
  });
}

/**
 * Gives every later query and raw statement of `db` a timeout, unless it sets its own. On MySQL
 * the statement is killed (KILL QUERY, on a connection of its own) so that it does not hold its
 * connection; better-sqlite3 runs statements synchronously, so there is nothing to cancel.
 * Not for the pool that migrates, which may rightly wait longer (for another instance's lock).
 */
export function applyQueryTimeout(db: Db, ms: number): void {
  const client = db.client as { runner(builder: unknown): unknown };
  const runner = client.runner.bind(client);
  const cancel = isMysql(db);
  client.runner = (builder: { _timeout?: number; timeout?: (ms: number, o: { cancel: boolean }) => void }) => {
    if (builder._timeout === undefined && typeof builder.timeout === 'function') builder.timeout(ms, { cancel });
    return runner(builder);
  };
}

/** Answers when the database runs a trivial statement within `ms` (readiness). */
export async function ping(db: Db, ms: number): Promise<void> {
  await db.raw('SELECT 1').timeout(ms, { cancel: false });
}

export interface PoolStats {
  /** Connections lent to a running request. */
  inUse: number;
  /** Open connections waiting to be lent. */
  idle: number;
  /** Requests waiting for a connection. */
  waiting: number;
  max: number;
}

/** The pool's state, for metrics (knex keeps a tarn pool on its client). */
export function poolStats(db: Db): PoolStats {
  const pool = (db.client as { pool?: TarnPool }).pool;
  if (!pool) return { inUse: 0, idle: 0, waiting: 0, max: 0 };
  return { inUse: pool.numUsed(), idle: pool.numFree(), waiting: pool.numPendingAcquires(), max: pool.max };
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

export function isMysql(db: Db): boolean {
  return db.client.config.client === 'mysql2';
}

/** Creates the MySQL database named in the config if it is missing (used by tests and first start). */
export async function ensureMysqlDatabase(config: DatabaseConfig): Promise<void> {
  if (config.client !== 'mysql') return;
  // Quiet: a failure here is thrown to the caller, which reports it once.
  const admin = openDb({ ...config, database: '' } as DatabaseConfig, DEFAULT_POOL, { warn() {}, error() {} });
  try {
    await admin.raw('CREATE DATABASE IF NOT EXISTS ?? CHARACTER SET utf8mb4 COLLATE utf8mb4_bin', [config.database]);
  } finally {
    await admin.destroy();
  }
}

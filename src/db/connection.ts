import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import knex, { Knex } from 'knex';
import type { DatabaseConfig } from '../config';

export type Db = Knex;

// Both dialects compare text the same way: binary collation, and LOWER() on both sides for a
// case-insensitive search. SQLite's own lower() folds ASCII only, so it is replaced by one that
// folds every alphabet, as MySQL's does: one character at a time. toLowerCase alone lowers Σ to
// ς at the end of a word, so "ΑΣ" would not contain the "σ" that a search for "Σ" becomes.
function unicodeLower(value: unknown): unknown {
  return typeof value === 'string' ? value.replace(/Σ/g, 'σ').toLowerCase() : value;
}

/**
 * Knex prints some errors itself (to stdout, with stacks) before rejecting the query that met
 * them; every one of them also reaches the caller, which reports it, so knex's own copy is muted.
 */
const quietLog = { warn() {}, error() {}, deprecate() {}, debug() {} };

export function openDb(config: DatabaseConfig): Db {
  if (config.client === 'sqlite') {
    if (config.filename !== ':memory:') mkdirSync(dirname(config.filename), { recursive: true });
    return knex({
      client: 'better-sqlite3',
      log: quietLog,
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
    client: 'mysql2',
    log: quietLog,
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
      connectTimeout: 2000,
    },
    pool: {
      min: 0,
      max: 10,
      afterCreate(conn: any, done: (err: Error | null, conn: unknown) => void) {
        conn.query(
          "SET SESSION time_zone = '+00:00', sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
          (err: Error | null) => done(err, conn),
        );
      },
    },
    acquireConnectionTimeout: 2000,
  });
}

export function isMysql(db: Db): boolean {
  return db.client.config.client === 'mysql2';
}

/** Creates the MySQL database named in the config if it is missing (used by tests and first start). */
export async function ensureMysqlDatabase(config: DatabaseConfig): Promise<void> {
  if (config.client !== 'mysql') return;
  const admin = openDb({ ...config, database: '' } as DatabaseConfig);
  try {
    await admin.raw('CREATE DATABASE IF NOT EXISTS ?? CHARACTER SET utf8mb4 COLLATE utf8mb4_bin', [config.database]);
  } finally {
    await admin.destroy();
  }
}

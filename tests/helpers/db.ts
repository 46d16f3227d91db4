import { migrateDatabase } from '../../src/schema';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDatabaseUrl, type DatabaseConfig, type PoolConfig } from '../../src/config';
import { withQueryTimeout, type DbLog, ensureMysqlDatabase, hookStatements, openDb, type Db } from '../../src/db/connection';

export const dialect: 'mysql' | 'sqlite' = process.env.TEST_DB === 'mysql' ? 'mysql' : 'sqlite';

/** The server that MySQL test databases are created on; never a database a user holds data in. */
export const MYSQL_SERVER_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';

export interface TestDatabase {
  config: DatabaseConfig;
  db: Db;
  /** Destroys the pool and drops the database (or deletes the SQLite file). */
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database of its own for one test file, in the dialect under test; with
 * `pool`, that pool size and query timeout, as the service applies them.
 */
export async function createTestDatabase(pool?: PoolConfig, log?: DbLog): Promise<TestDatabase> {
  const config = freshConfig();
  await ensureMysqlDatabase(config);
  await migrateDatabase(config, log);
  const opened = openDb(config, pool, log);
  const db = pool ? withQueryTimeout(opened, pool.queryTimeoutMs) : opened;
  return { config, db, drop: () => dropTestDatabase(config, db) };
}

/**
 * A fresh, migrated database for the enclosing describe block (or file): created before its
 * tests, dropped after them. Its `db` and `config` are read once the tests run.
 */
export function useTestDatabase(pool?: PoolConfig, log?: DbLog): TestDatabase {
  let created: TestDatabase | undefined;
  beforeAll(async () => {
    created = await createTestDatabase(pool, log);
  });
  afterAll(() => created?.drop());
  const made = (): TestDatabase => {
    if (!created) throw new Error('useTestDatabase: its database exists only while the tests run');
    return created;
  };
  return {
    get config() {
      return made().config;
    },
    get db() {
      return made().db;
    },
    drop: () => made().drop(),
  };
}

/** A transaction's frame (BEGIN, COMMIT, ...), not a statement of its work; knex logs both. */
export function isTransactionControl(sql: string): boolean {
  return /^\s*(begin|start transaction|commit|rollback|set transaction|savepoint|release savepoint)\b/i.test(sql);
}

/** The SQL of every statement `db` sends from now on, in order; `.length = 0` clears it. */
export function logStatements(db: Db): string[] {
  const log: string[] = [];
  db.on('query', (q: { sql: string }) => log.push(q.sql));
  return log;
}

/** A config for a database that does not exist yet (test names are prefixed records_test_). */
export function freshConfig(): DatabaseConfig {
  const suffix = `${process.pid}_${randomBytes(4).toString('hex')}`;
  if (dialect === 'mysql') {
    const server = new URL(MYSQL_SERVER_URL);
    server.pathname = `/records_test_${suffix}`;
    return parseDatabaseUrl(server.toString());
  }
  const dir = mkdtempSync(join(tmpdir(), 'records-test-'));
  return { client: 'sqlite', filename: join(dir, `records_test_${suffix}.sqlite3`) };
}

export async function dropTestDatabase(config: DatabaseConfig, db?: Db): Promise<void> {
  await db?.destroy();
  if (config.client === 'sqlite') {
    rmSync(join(config.filename, '..'), { recursive: true, force: true });
    return;
  }
  if (!config.database.startsWith('records_test_')) throw new Error(`refusing to drop ${config.database}`);
  const admin = openDb({ ...config, database: '' });
  try {
    await admin.raw('DROP DATABASE IF EXISTS ??', [config.database]);
  } finally {
    await admin.destroy();
  }
}

/**
 * `db` whose statements that read `table` have `between` run (on another connection) after their
 * answer and before the next statement: a write landing mid-search, at one chosen moment.
 * Transactions begun on it are wrapped the same way. `runs` counts them.
 */
export function pausingAfter(db: Db, table: string, between: () => Promise<unknown>): { db: Db; runs: () => number } {
  let runs = 0;
  const hook = (built: unknown): unknown => {
    const b = built as { then?: unknown; toSQL?: () => { sql: string } } | undefined;
    if (typeof b?.then !== 'function' || typeof b.toSQL !== 'function') return built;
    const then = (b.then as (ok: (v: unknown) => unknown) => Promise<unknown>).bind(b);
    b.then = (ok?: (v: unknown) => unknown, fail?: (e: unknown) => unknown) =>
      then(async (v) => {
        if (b.toSQL!().sql.includes(`\`${table}\``)) {
          runs++;
          await between();
        }
        return v;
      }).then(ok, fail);
    return built;
  };
  return { db: hookStatements(db, hook), runs: () => runs };
}

import type { Knex } from 'knex';
import type { DatabaseConfig } from '../config';
import { type Db, type DbLog, DEFAULT_POOL, isMysql, openDb } from './connection';

type Migration = { up(db: Knex): Promise<void>; down(db: Knex): Promise<void> };

/** Common columns; MySQL tables are utf8mb4 with a binary collation, as SQLite compares text. */
function recordTable(db: Knex, name: string, columns: (t: Knex.CreateTableBuilder, mysql: boolean) => void) {
  const mysql = isMysql(db);
  return db.schema.createTable(name, (t) => {
    if (mysql) {
      t.engine('InnoDB');
      t.charset('utf8mb4');
      t.collate('utf8mb4_bin');
    }
    t.bigIncrements('id');
    columns(t, mysql);
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    // Serves the default order (newest first, id as tie-breaker) without a sort.
    t.index(['created_at', 'id'], `${name}_created_at_id_index`);
  });
}

const migrations: Record<string, Migration> = {
  '20261122_001_records': {
    async up(db) {
      await recordTable(db, 'posts', (t) => {
        t.string('title', 100).notNullable();
        t.text('content', 'longtext').notNullable();
        t.string('author', 50).notNullable();
      });
      await recordTable(db, 'products', (t) => {
        t.string('name', 200).notNullable();
        t.text('description', 'longtext').notNullable();
        t.decimal('price', 10, 2).notNullable();
        t.integer('stock').notNullable();
      });
      await recordTable(db, 'books', (t) => {
        t.string('title', 200).notNullable();
        t.string('author', 100).notNullable();
        t.string('genre', 50).notNullable();
        t.date('published_date').nullable();
        t.string('isbn', 13).notNullable().unique({ indexName: 'books_isbn_unique' });
      });
      await recordTable(db, 'users', (t, mysql) => {
        t.string('username', 150).notNullable().unique({ indexName: 'users_username_unique' });
        // Email is unique ignoring case. The email format admits ASCII only, so an ASCII-folding
        // collation on each side is exact.
        if (mysql) t.string('email', 254).notNullable().collate('utf8mb4_unicode_ci');
        else t.specificType('email', 'varchar(254) COLLATE NOCASE').notNullable();
        t.unique(['email'], { indexName: 'users_email_unique' });
        t.string('first_name', 150).notNullable();
        t.string('last_name', 150).notNullable();
      });
      await recordTable(db, 'tasks', (t) => {
        t.string('title', 200).notNullable();
        t.text('description', 'longtext').notNullable();
        t.string('status', 20).notNullable();
        t.string('priority', 10).notNullable();
        t.date('due_date').nullable();
      });
    },
    async down(db) {
      for (const table of ['tasks', 'users', 'books', 'products', 'posts']) await db.schema.dropTableIfExists(table);
    },
  },
};

const source: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations).sort(),
  getMigrationName: (name) => name,
  getMigration: async (name) => migrations[name],
};

const LOCK_NAME = 'records_api_migrations';
const LOCK_WAIT_SECONDS = 60;

/**
 * Brings the schema up to date. Safe when several instances start at once: on MySQL they queue
 * on a named lock, held on a connection of its own; on SQLite they retry while the file is busy.
 */
/**
 * Migrates on a pool of its own: the MySQL lock holds one connection while the migrations need
 * another, which a service pool of one (DB_POOL_SIZE=1) could never give; and the service's
 * query timeout must not cut a migration short.
 */
export async function migrateDatabase(config: DatabaseConfig, log?: DbLog): Promise<void> {
  const db = openDb(config, DEFAULT_POOL, log);
  try {
    await migrate(db);
  } finally {
    await db.destroy();
  }
}

export async function migrate(db: Db): Promise<void> {
  const config = { migrationSource: source, tableName: 'knex_migrations' };
  if (!isMysql(db)) {
    await retryWhileBusy(() => db.migrate.latest(config));
    return;
  }
  const conn = await db.client.acquireConnection();
  try {
    const [rows] = await db.raw('SELECT GET_LOCK(?, ?) AS locked', [LOCK_NAME, LOCK_WAIT_SECONDS]).connection(conn);
    if (Number(rows[0].locked) !== 1) throw new Error(`timed out after ${LOCK_WAIT_SECONDS}s waiting for another instance's migrations`);
    try {
      await db.migrate.latest(config);
    } finally {
      await db.raw('SELECT RELEASE_LOCK(?)', [LOCK_NAME]).connection(conn);
    }
  } finally {
    await db.client.releaseConnection(conn);
  }
}

async function retryWhileBusy(run: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + LOCK_WAIT_SECONDS * 1000;
  for (;;) {
    try {
      await run();
      return;
    } catch (err) {
      const text = `${(err as Error).name} ${(err as { code?: string }).code} ${(err as Error).message}`;
      const busy = /MigrationLocked|SQLITE_BUSY|already exists/.test(text);
      if (!busy || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
}

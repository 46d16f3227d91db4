import type { Knex } from 'knex';
import { randomBytes } from 'node:crypto';
import type { DatabaseConfig } from '../config';
import { type Db, type DbLog, DEFAULT_POOL, isMysql, openDb } from './connection';
import { COUNT_SLOTS } from './counts';

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

/** Tables of records, for migrations that change all five alike. */
const RECORD_TABLES = ['posts', 'products', 'books', 'users', 'tasks'];

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
      for (const table of [...RECORD_TABLES].reverse()) await db.schema.dropTableIfExists(table);
    },
  },
};

migrations['20261122_002_versions_and_idempotency'] = {
  async up(db) {
    // The version behind each record's ETag: bumped by every write, compared by If-Match.
    for (const table of RECORD_TABLES) {
      await db.schema.alterTable(table, (t) => {
        t.integer('version').notNullable().defaultTo(1);
      });
    }
    await db.schema.createTable('idempotency_keys', (t) => {
      if (isMysql(db)) {
        t.engine('InnoDB');
        t.charset('utf8mb4');
        t.collate('utf8mb4_bin');
      }
      t.bigIncrements('id');
      t.string('collection', 20).notNullable();
      t.string('idem_key', 255).notNullable();
      t.string('request_hash', 64).notNullable();
      t.string('state', 10).notNullable();
      t.integer('response_status').nullable();
      t.text('response_body', 'longtext').nullable();
      t.string('response_location', 255).nullable();
      t.string('response_etag', 64).nullable();
      t.datetime('created_at', { precision: 3 }).notNullable();
      t.unique(['collection', 'idem_key'], { indexName: 'idempotency_keys_collection_key_unique' });
      t.index(['created_at'], 'idempotency_keys_created_at_index');
    });
  },
  async down(db) {
    await db.schema.dropTableIfExists('idempotency_keys');
    for (const table of RECORD_TABLES) {
      await db.schema.alterTable(table, (t) => {
        t.dropColumn('version');
      });
    }
  },
};

migrations['20261122_003_counts_and_secrets'] = {
  async up(db) {
    // Row counts kept by the writes themselves, so that an unfiltered list does not pay a
    // COUNT(*) over the whole table. Spread over slots so that concurrent creates rarely wait
    // on one another's counter row.
    await db.schema.createTable('record_counts', (t) => {
      t.string('table_name', 20).notNullable();
      t.integer('slot').notNullable();
      t.bigInteger('n').notNullable();
      t.primary(['table_name', 'slot']);
    });
    for (const table of RECORD_TABLES) {
      const [{ n }] = await db(table).count({ n: '*' });
      const rows = Array.from({ length: COUNT_SLOTS }, (_, slot) => ({ table_name: table, slot, n: slot === 0 ? Number(n) : 0 }));
      await db('record_counts').insert(rows);
    }
    // Secrets that every instance on this database shares, made once (cursor signatures).
    await db.schema.createTable('service_secrets', (t) => {
      t.string('name', 50).primary();
      t.string('value', 128).notNullable();
    });
    await db('service_secrets').insert({ name: 'cursor', value: randomBytes(32).toString('hex') });
  },
  async down(db) {
    await db.schema.dropTableIfExists('service_secrets');
    await db.schema.dropTableIfExists('record_counts');
  },
};

migrations['20261122_004_count_triggers'] = {
  // The counters move inside the statements that insert and delete, so that they stay exact
  // at no cost of round trips. On MySQL each connection bumps its own slot (no two pool
  // connections wait on one counter row); SQLite has a single writer and uses slot 0.
  async up(db) {
    const mysql = isMysql(db);
    const slot = mysql ? `CONNECTION_ID() % ${COUNT_SLOTS}` : '0';
    for (const table of RECORD_TABLES) {
      for (const [event, delta] of [['INSERT', '+ 1'], ['DELETE', '- 1']]) {
        const name = `${table}_count_${event.toLowerCase()}`;
        await db.raw(
          `CREATE TRIGGER ${name} AFTER ${event} ON ${table} FOR EACH ROW ` +
            `${mysql ? '' : 'BEGIN '}UPDATE record_counts SET n = n ${delta} WHERE table_name = '${table}' AND slot = ${slot}${mysql ? '' : '; END'}`,
        );
      }
    }
  },
  async down(db) {
    for (const table of RECORD_TABLES) {
      for (const event of ['insert', 'delete']) await db.raw(`DROP TRIGGER IF EXISTS ${table}_count_${event}`);
    }
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

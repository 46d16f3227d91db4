import type { Knex } from 'knex';
import { randomBytes } from 'node:crypto';
import type { DatabaseConfig } from '../config';
import { type Db, type DbLog, DEFAULT_POOL, isMysql, openDb } from './connection';
import { withMigrationLease } from './lease';
import { orderIndexName } from './order';
import { retrying } from './retry';
import { BULK_COUNT_SLOT, recount } from './counts';
import {
  type RecordTableParts,
  addBulkCounterRow,
  addCounterRows,
  addCountTriggers,
  createRecordTable,
  dropCountTriggers,
  dropRecordTable,
  tableDefaults,
} from './tables';
import { collectionNamed, collections } from '../collections';

/**
 * What the schema holds beside the records' own tables, given by its owner (src/schema.ts puts
 * search's in): migrations of its own, keyed as these are, and what a new record table needs.
 */
export interface SchemaParts {
  migrations: Readonly<Record<string, Migration>>;
  recordTable: RecordTableParts;
}

/** A migration; `parts` are the schema's other parts, for one that makes a record table. */
export type Migration = { up(db: Knex, parts: SchemaParts): Promise<void>; down(db: Knex, parts: SchemaParts): Promise<void> };

/** Common columns; MySQL tables are utf8mb4 with a binary collation, as SQLite compares text. */
function recordTable(db: Knex, name: string, columns: (t: Knex.CreateTableBuilder, mysql: boolean) => void) {
  const mysql = isMysql(db);
  return db.schema.createTable(name, (t) => {
    tableDefaults(t, mysql);
    t.bigIncrements('id');
    columns(t, mysql);
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    // Serves the default order (newest first, id as tie-breaker) without a sort.
    t.index(['created_at', 'id'], orderIndexName(name));
  });
}

/**
 * The tables the first migrations made, for the migrations that changed those five alike. Frozen
 * (tests/unit/collections.test.ts): a collection added later gets its whole table, counters,
 * triggers and search index from createRecordTable, in a migration of its own.
 */
export const RECORD_TABLES = ['posts', 'products', 'books', 'users', 'tasks'];
/**
 * Their declarations. Migrations 005 to 007 index these only: a later collection's table does not
 * exist yet when they run, and its own migration indexes it (createRecordTable).
 */
export const FIRST_COLLECTIONS = collections.filter((c) => RECORD_TABLES.includes(c.name));

/**
 * The migration of a collection declared after the first five: its table, counters, triggers and
 * search index, from its declaration and the spec as they are when it runs (createRecordTable).
 */
export function recordTableMigration(name: string): Migration {
  const declared = () => collectionNamed(name, (m) => new Error(`the migration of ${name}: ${m}`));
  return {
    up: (db, parts) => createRecordTable(db, declared(), parts.recordTable),
    down: (db, parts) => dropRecordTable(db, name, parts.recordTable),
  };
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
      tableDefaults(t, isMysql(db));
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
    // Row counts kept by the writes themselves, spread over slots so that concurrent creates
    // rarely wait on one row. See docs/adr/0003-counts-by-triggers.md.
    await db.schema.createTable('record_counts', (t) => {
      t.string('table_name', 20).notNullable();
      t.integer('slot').notNullable();
      t.bigInteger('n').notNullable();
      t.primary(['table_name', 'slot']);
    });
    for (const table of RECORD_TABLES) await addCounterRows(db, table);
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
  async up(db) {
    for (const table of RECORD_TABLES) await addCountTriggers(db, table);
  },
  async down(db) {
    for (const table of RECORD_TABLES) await dropCountTriggers(db, table);
  },
};

migrations['20261128_012_bulk_count_slot'] = {
  // MySQL: a counter row per table for bulk loads, and triggers that use it when the session
  // says so (tables.ts), so that a load's open transaction holds no row the service's creates need.
  async up(db) {
    for (const table of RECORD_TABLES) {
      await addBulkCounterRow(db, table);
      if (!isMysql(db)) continue;
      await dropCountTriggers(db, table);
      await addCountTriggers(db, table);
    }
  },
  async down(db) {
    for (const table of RECORD_TABLES) {
      await recount(db, table);
      await db('record_counts').where({ table_name: table, slot: BULK_COUNT_SLOT }).delete();
    }
  },
};

migrations['20261129_014_idempotency_callers'] = {
  // Idempotency keys per caller (the principal's name; '' for an API without tokens), so that one
  // token's key never replays or blocks another's create. The rows already there are given to ''
  // (the open caller): they were stored without a caller, and on an API that had no tokens that is
  // whose they are. On one with tokens, a retry across the upgrade runs its create again.
  async up(db) {
    if (isMysql(db)) {
      // One statement: MySQL does not roll DDL back, so a start that dies midway leaves no half.
      await db.raw(
        "ALTER TABLE ?? ADD COLUMN caller VARCHAR(255) NOT NULL DEFAULT '' AFTER collection, DROP INDEX ??, ADD UNIQUE KEY ?? (collection, caller, idem_key)",
        ['idempotency_keys', 'idempotency_keys_collection_key_unique', 'idempotency_keys_collection_caller_key_unique'],
      );
      return;
    }
    await db.schema.alterTable('idempotency_keys', (t) => {
      t.string('caller', 255).notNullable().defaultTo('');
    });
    await db.schema.alterTable('idempotency_keys', (t) => {
      t.dropUnique(['collection', 'idem_key'], 'idempotency_keys_collection_key_unique');
      t.unique(['collection', 'caller', 'idem_key'], { indexName: 'idempotency_keys_collection_caller_key_unique' });
    });
  },
  async down(db) {
    // The open caller's keys fit the old unique key; the tokens' would clash with them and go.
    await db('idempotency_keys').whereNot({ caller: '' }).delete();
    if (isMysql(db)) {
      await db.raw('ALTER TABLE ?? DROP INDEX ??, DROP COLUMN caller, ADD UNIQUE KEY ?? (collection, idem_key)', [
        'idempotency_keys',
        'idempotency_keys_collection_caller_key_unique',
        'idempotency_keys_collection_key_unique',
      ]);
      return;
    }
    await db.schema.alterTable('idempotency_keys', (t) => {
      t.dropUnique(['collection', 'caller', 'idem_key'], 'idempotency_keys_collection_caller_key_unique');
    });
    await db.raw('ALTER TABLE ?? DROP COLUMN caller', ['idempotency_keys']);
    await db.schema.alterTable('idempotency_keys', (t) => {
      t.unique(['collection', 'idem_key'], { indexName: 'idempotency_keys_collection_key_unique' });
    });
  },
};

migrations['20261207_015_text_nfc'] = {
  // Text is stored in Unicode NFC since this migration (src/lib/text.ts): rows written before are
  // rewritten to it, their version one higher; the search triggers index the new text.
  async up(db) {
    for (const table of RECORD_TABLES) await textToNfc(db, table);
  },
  async down() {},
};

/**
 * Rewrites the text of `table`'s rows that is not NFC, a chunk of ids at a time. A row whose text
 * would then repeat another's unique value is left as it was, for its owner to resolve.
 */
async function textToNfc(db: Knex, table: string): Promise<void> {
  for (let after = 0; ;) {
    const rows = await db<Record<string, unknown>>(table).where('id', '>', after).orderBy('id').limit(1000);
    if (!rows.length) return;
    after = Number(rows[rows.length - 1].id);
    for (const row of rows) {
      const changed = Object.entries(row).filter(([, v]) => typeof v === 'string' && v.normalize('NFC') !== v);
      if (!changed.length) continue;
      const values = Object.fromEntries(changed.map(([k, v]) => [k, (v as string).normalize('NFC')]));
      await db(table)
        .where({ id: row.id })
        .update({ ...values, version: db.raw('?? + 1', ['version']) })
        .catch((err: { code?: string }) => {
          if (err.code !== 'ER_DUP_ENTRY' && err.code !== 'SQLITE_CONSTRAINT_UNIQUE') throw err;
        });
    }
  }
}

/**
 * Why the migrations' names are wrong, or undefined: each is `YYYYMMDD_NNN_what`, its NNN used
 * once. Names run in date order, so a repeated number still runs, but no longer says which came
 * first, and the next one is counted from the wrong place.
 */
export function misnumberedMigration(names: readonly string[]): string | undefined {
  const byNumber = new Map<string, string>();
  for (const name of [...names].sort()) {
    const number = /^\d{8}_(\d{3})_[a-z0-9_]+$/.exec(name)?.[1];
    if (number === undefined) return `migration ${name} is not named YYYYMMDD_NNN_what`;
    const first = byNumber.get(number);
    if (first) return `migrations ${first} and ${name} share the number ${number}: give ${name} the next free one`;
    byNumber.set(number, name);
  }
  return undefined;
}

/** Every migration's name: these and `parts`'. */
export function migrationNames(parts: SchemaParts): string[] {
  return Object.keys({ ...migrations, ...parts.migrations }).sort();
}

/** The migrations as knex reads them: these and `parts`', in the order of their keys. */
export function migrationSource(parts: SchemaParts): Knex.MigrationSource<string> {
  const all: Record<string, Migration> = { ...migrations, ...parts.migrations };
  return {
    getMigrations: () => {
      const wrong = misnumberedMigration(migrationNames(parts));
      return wrong ? Promise.reject(new Error(wrong)) : Promise.resolve(migrationNames(parts));
    },
    getMigrationName: (name) => name,
    getMigration: (name) => Promise.resolve({ up: (db: Knex) => all[name].up(db, parts), down: (db: Knex) => all[name].down(db, parts) }),
  };
}

const LOCK_WAIT_SECONDS = 60;

/**
 * Brings the schema up to date, safely when several instances start at once (a lease row on MySQL,
 * retries on SQLite), on a pool of its own that the query timeout cannot cut short.
 */
export async function migrateDatabase(config: DatabaseConfig, parts: SchemaParts, log?: DbLog): Promise<void> {
  const db = openDb(config, DEFAULT_POOL, log);
  try {
    await migrate(db, parts);
  } finally {
    await db.destroy();
  }
}

export async function migrate(db: Db, parts: SchemaParts): Promise<void> {
  const config = { migrationSource: migrationSource(parts), tableName: 'knex_migrations' };
  if (!isMysql(db)) {
    // SQLite runs every migration and knex's lock flag in one transaction: a flag found set outside
    // one is stale, so it is cleared first; a migration running now holds the write lock, so the
    // clearing waits for it (busy timeout) instead of racing it.
    await retryWhileBusy(async () => {
      await resetKnexLock(db);
      await db.migrate.latest(config);
    });
    return;
  }
  await withMigrationLease(db, () =>
    // On Galera the previous holder's writes (knex's lock row) may not be applied on this node
    // yet: this holder's first write to them then loses certification, reported as a deadlock
    // at COMMIT, and is rolled back. Run again, it finds them applied.
    retrying(async () => {
      // Knex's own flag is only ever taken under the lease; one left set by an instance that
      // died mid-migration would otherwise block every later start.
      await resetKnexLock(db);
      await db.migrate.latest(config);
    }),
  );
}

const KNEX_LOCK = 'knex_migrations_lock';

/**
 * Leaves knex's lock table with one row, unlocked, where no migration is running: two processes
 * making it at once can both insert a row, and knex never locks a table of two rows. On SQLite this
 * relies on every migration running in a transaction (never `config: { transaction: false }`).
 */
async function resetKnexLock(db: Db): Promise<void> {
  if (!(await db.schema.hasTable(KNEX_LOCK))) return;
  await db.transaction(async (trx) => {
    await trx(KNEX_LOCK).update({ is_locked: 0 });
    // Through a derived table: MySQL refuses a subquery on the table a DELETE removes from.
    const first = trx.from(trx(KNEX_LOCK).min({ first: 'index' }).as('lowest')).select('first');
    await trx(KNEX_LOCK).where('index', '>', first).del();
  });
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

import type { Knex } from 'knex';
import { isMysql } from '../db/connection';
import { FIRST_COLLECTIONS, type Migration, RECORD_TABLES, type SchemaParts } from '../db/migrations';
import { addDenseWords } from './mysql/denseWords';
import { addPostings } from './mysql/postingsTable';
import {
  addRemovalsRow,
  addWordGrams,
  addWordIndex,
  mysqlDropStatements,
  mysqlGramDropStatements,
  remakeDocs,
  REMOVALS,
  wordTables,
} from './mysql/wordIndex';
import { sqliteTokenDropStatements, sqliteTokenStatements } from './sqlite/tokens';
import { indexTable, sqliteIndexStatements } from './sqlite/trigramIndex';

// The search index's part of the schema: its migrations, which src/schema.ts runs among the
// records' own (src/db/migrations.ts) in the order of their keys, and a new record table's index.

export { addDenseWords } from './mysql/denseWords';
export { addPostings } from './mysql/postingsTable';
export {
  addRemovalsRow,
  addWordGrams,
  addWordIndex,
  mysqlDropStatements,
  mysqlGramDropStatements,
  remakeDocs,
  REMOVALS,
  wordTables,
} from './mysql/wordIndex';
export { sqliteTokenDropStatements, sqliteTokenStatements } from './sqlite/tokens';
export { indexTable, sqliteIndexStatements } from './sqlite/trigramIndex';

/**
 * A new record table's search index, as every migration so far leaves it (SQLite: 005's trigram
 * table and 011's token index; MySQL: 006's word index, 007's grams, 009's removal count, 010's
 * dense words, 013's postings), for the table's search fields.
 */
export async function createSearchIndex(db: Knex, table: string, fields: readonly string[]): Promise<void> {
  if (isMysql(db)) {
    await addWordIndex(db, table, fields);
    await addWordGrams(db, table);
    await addRemovalsRow(db, table);
    await addDenseWords(db, table);
    await addPostings(db, table, wordTables(table).docs);
  } else for (const sql of [...sqliteIndexStatements(table, fields), ...sqliteTokenStatements(table, fields)]) await db.raw(sql);
}

/** Drops a record table's search index (before the table itself). */
export async function dropSearchIndex(db: Knex, table: string): Promise<void> {
  if (isMysql(db)) {
    for (const sql of mysqlDropStatements(table)) await db.raw(sql);
    await db(REMOVALS).where({ table_name: table }).delete();
  } else for (const sql of [`DROP TABLE IF EXISTS "${indexTable(table)}"`, ...sqliteTokenDropStatements(table)]) await db.raw(sql);
}

/** The migrations that built the index step by step, keyed as the records' own are. */
const searchMigrations: Record<string, Migration> = {};

searchMigrations['20261123_005_search_index'] = {
  // SQLite: a trigram index of each table's search fields (src/search/sqlite/trigramIndex.ts), filled from the rows
  // already there and kept by triggers. MySQL keeps scanning here; see src/search/plan.ts.
  async up(db) {
    if (isMysql(db)) return;
    for (const c of FIRST_COLLECTIONS) {
      for (const sql of sqliteIndexStatements(c.name, c.searchFields)) await db.raw(sql);
    }
  },
  async down(db) {
    if (isMysql(db)) return;
    for (const table of RECORD_TABLES) {
      for (const event of ['insert', 'delete', 'update']) await db.raw(`DROP TRIGGER IF EXISTS "${indexTable(table)}_${event}"`);
      await db.raw(`DROP TABLE IF EXISTS "${indexTable(table)}"`);
    }
  },
};

searchMigrations['20261123_006_word_index'] = {
  // MySQL: the word index (src/search/mysql/wordIndex.ts); the rows already there are left pending (searched by
  // scan) until `npm run search-index` indexes them. SQLite has its trigram index since 005.
  async up(db) {
    if (!isMysql(db)) return;
    for (const c of FIRST_COLLECTIONS) await addWordIndex(db, c.name, c.searchFields);
  },
  async down(db) {
    if (!isMysql(db)) return;
    for (const table of RECORD_TABLES) for (const sql of mysqlDropStatements(table)) await db.raw(sql);
  },
};

searchMigrations['20261123_007_word_grams'] = {
  // MySQL: the vocabulary's trigrams (src/search/mysql/wordIndex.ts), so that a term's words are found by a few
  // index probes instead of a scan of every word; filled here for the words already there.
  async up(db) {
    if (!isMysql(db)) return;
    for (const c of FIRST_COLLECTIONS) await addWordGrams(db, c.name);
  },
  async down(db) {
    if (!isMysql(db)) return;
    for (const table of RECORD_TABLES) for (const sql of mysqlGramDropStatements(table)) await db.raw(sql);
  },
};

searchMigrations['20261124_008_own_doc_ids'] = {
  // MySQL: the docs tables made again with doc ids of their own, and a delete trigger that leaves
  // the record pending (docs/adr/0011-word-index-own-codes.md). Every record is pending until the
  // indexer, or `npm run search-index`, has indexed it again.
  async up(db) {
    if (!isMysql(db)) return;
    for (const table of RECORD_TABLES) await remakeDocs(db, table);
  },
  async down(db) {
    if (!isMysql(db)) return;
    // As migration 006 made them.
    for (const table of RECORD_TABLES) {
      const { docs, pending } = wordTables(table);
      await db.raw('DROP TRIGGER IF EXISTS ??', [`${table}_search_delete`]);
      await db.raw('DROP TABLE IF EXISTS ??', [docs]);
      await db.raw(
        'CREATE TABLE ?? (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, codes LONGTEXT NOT NULL, FULLTEXT KEY ?? (codes)) ' +
          'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin',
        [docs, `${docs}_codes`],
      );
      await db.raw(
        'CREATE TRIGGER ?? AFTER DELETE ON ?? FOR EACH ROW BEGIN DELETE FROM ?? WHERE id = OLD.id; DELETE FROM ?? WHERE id = OLD.id; END',
        [`${table}_search_delete`, table, docs, pending],
      );
      await db.raw('INSERT IGNORE INTO ?? (id) SELECT id FROM ??', [pending, table]);
    }
  },
};

searchMigrations['20261125_009_search_removals'] = {
  // MySQL: how many transactions removed docs rows, per table (src/search/mysql/wordIndex.ts, REMOVALS), so that a
  // search knows when one committed while it ran; a table without its row counts from 0.
  async up(db) {
    if (!isMysql(db)) return;
    await db.schema.createTable(REMOVALS, (t) => {
      t.string('table_name', 64).primary();
      t.bigInteger('n').unsigned().notNullable().defaultTo(0);
    });
    for (const table of RECORD_TABLES) await addRemovalsRow(db, table);
  },
  async down(db) {
    if (!isMysql(db)) return;
    await db.schema.dropTableIfExists(REMOVALS);
  },
};

searchMigrations['20261125_010_dense_words'] = {
  // MySQL: the words nearly every record holds, and per word the records without it
  // (src/search/mysql/denseWords.ts), so that a term in most records is counted without reading their text. Empty
  // until chosen (seed, import, `npm run search-index`, the service's indexer).
  async up(db) {
    if (!isMysql(db)) return;
    for (const table of RECORD_TABLES) await addDenseWords(db, table);
  },
  async down(db) {
    if (!isMysql(db)) return;
    for (const table of RECORD_TABLES) {
      const { dense, without } = wordTables(table);
      await db.schema.dropTableIfExists(without);
      await db.schema.dropTableIfExists(dense);
    }
  },
};

searchMigrations['20261127_011_token_index'] = {
  // SQLite: the token index beside the trigram index (src/search/sqlite/tokens.ts), filled from the rows already there.
  async up(db) {
    if (isMysql(db)) return;
    for (const c of FIRST_COLLECTIONS) for (const sql of sqliteTokenStatements(c.name, c.searchFields)) await db.raw(sql);
  },
  async down(db) {
    if (isMysql(db)) return;
    for (const table of RECORD_TABLES) for (const sql of sqliteTokenDropStatements(table)) await db.raw(sql);
  },
};

searchMigrations['20261128_013_search_postings'] = {
  // MySQL: per word and block of ids, the records holding it (src/search/mysql/postingsTable.ts), filled
  // from the docs rows, so that a search counts its matches without InnoDB FULLTEXT visiting them.
  async up(db) {
    if (!isMysql(db)) return;
    for (const table of RECORD_TABLES) await addPostings(db, table, wordTables(table).docs);
  },
  async down(db) {
    if (!isMysql(db)) return;
    for (const table of RECORD_TABLES) await db.schema.dropTableIfExists(wordTables(table).postings);
  },
};

/** The search index's part of the database schema (src/schema.ts). */
export const schemaParts: SchemaParts = {
  migrations: searchMigrations,
  recordTable: { create: createSearchIndex, drop: dropSearchIndex },
};

import type { Knex } from 'knex';
import { collections } from '../collections';
import { isMysql } from '../db/connection';
import type { Migration, SchemaParts } from '../db/migrations';
import { pendingStatements, pendingTable } from './sets/indexer';
import { createSetTables, dropSetTables } from './sets/store';

// The search index's part of the schema: its migrations, which src/schema.ts runs among the
// records' own (src/db/migrations.ts) in the order of their keys, and a new record table's index.

/**
 * A record table's index of sets (sets/store.ts) and the pending table its triggers fill
 * (sets/indexer.ts). The rows already there are listed pending: searched by the scan's predicate
 * until the service's indexer, or `npm run search-index`, indexes them.
 */
export async function createSearchIndex(db: Knex, table: string, fields: readonly string[]): Promise<void> {
  await createSetTables(db, table);
  const mysql = isMysql(db);
  for (const sql of pendingStatements(mysql, table, fields)) await db.raw(sql);
  await db.raw(`INSERT INTO ?? (id, indexed) SELECT id, 0 FROM ??`, [pendingTable(table), table]);
}

/** Drops a record table's search index (before the table itself). */
export async function dropSearchIndex(db: Knex, table: string): Promise<void> {
  for (const event of ['insert', 'update', 'delete']) await db.raw('DROP TRIGGER IF EXISTS ??', [`${table}_set_${event}`]);
  await db.schema.dropTableIfExists(pendingTable(table));
  await dropSetTables(db, table);
}

/**
 * The indexes of the engines before the sets (docs/adr/0025-search-by-sets.md): SQLite's FTS5
 * trigram and token indexes, MySQL's word index with its grams, dense words and postings.
 */
function earlierIndexStatements(mysql: boolean, table: string): string[] {
  const q = (name: string) => (mysql ? `\`${name}\`` : `"${name}"`);
  const triggers = mysql
    ? ['insert', 'update', 'delete'].map((e) => `${table}_search_${e}`).concat(`${table}_search_words_grams`)
    : ['insert', 'update', 'delete'].flatMap((e) => [`${table}_search_${e}`, `${table}_search_tokens_${e}`]);
  const tables = ['search', 'search_tokens', 'search_vocab', 'search_vocab_grams', 'search_words', 'search_grams', 'search_docs']
    .concat(['search_pending', 'search_dense', 'search_without', 'search_postings'])
    .map((suffix) => `${table}_${suffix}`);
  return [...triggers.map((t) => `DROP TRIGGER IF EXISTS ${q(t)}`), ...tables.map((t) => `DROP TABLE IF EXISTS ${q(t)}`)];
}

/**
 * The migrations that built the index step by step, keyed as the records' own are. Those of the
 * engines before the sets do nothing now (a database that ran them has their keys recorded);
 * 016 drops what they made and builds the sets.
 */
const searchMigrations: Record<string, Migration> = {};
const replaced = { up: async () => {}, down: async () => {} };
for (const key of [
  '20261123_005_search_index',
  '20261123_006_word_index',
  '20261123_007_word_grams',
  '20261124_008_own_doc_ids',
  '20261125_009_search_removals',
  '20261125_010_dense_words',
  '20261127_011_token_index',
  '20261128_013_search_postings',
])
  searchMigrations[key] = replaced;

searchMigrations['20261208_016_search_sets'] = {
  // Every record table with search fields that exists by now: later collections' own migrations
  // make their index with their table (createSearchIndex).
  async up(db) {
    const mysql = isMysql(db);
    for (const c of collections) {
      if (!c.searchFields.length || !(await db.schema.hasTable(c.name))) continue;
      for (const sql of earlierIndexStatements(mysql, c.name)) await db.raw(sql);
      await createSearchIndex(db, c.name, c.searchFields);
    }
    if (mysql) await db.schema.dropTableIfExists('search_removals');
  },
  // The earlier engines are not made again: their code is gone. Going back drops the sets, which
  // search needs: for tests that step the schema back and forth.
  async down(db) {
    for (const c of collections) if (await db.schema.hasTable(c.name)) await dropSearchIndex(db, c.name);
  },
};

/** The search index's part of the database schema (src/schema.ts). */
export const schemaParts: SchemaParts = {
  migrations: searchMigrations,
  recordTable: { create: createSearchIndex, drop: dropSearchIndex },
};

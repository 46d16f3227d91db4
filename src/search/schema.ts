import type { Knex } from 'knex';
import { isMysql } from '../db/connection';
import { addDenseWords } from './mysql/denseWords';
import { addPostings } from './mysql/postingsTable';
import { addRemovalsRow, addWordGrams, addWordIndex, mysqlDropStatements, REMOVALS, wordTables } from './mysql/wordIndex';
import { sqliteTokenDropStatements, sqliteTokenStatements } from './sqlite/tokens';
import { indexTable, sqliteIndexStatements } from './sqlite/trigramIndex';

// The search index's tables and triggers for a record table, as the migrations made them.
// Migrations that built the index step by step import those steps from here too.

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

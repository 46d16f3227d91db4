import { totalmem } from 'node:os';
import { searchFold } from '../fold';
import { sqliteFieldsChanged, sqliteTokenFill, sqliteTokenInsertTrigger, tokenTables } from './tokens';

/**
 * The search index on SQLite: an FTS5 trigram table over the text as the scan folds it, so a
 * phrase query of a folded term is exactly the scan's predicate.
 * See docs/adr/0005-search-exact-index.md.
 */
export const TRIGRAM = 3;

export function indexTable(table: string): string {
  return `${table}_search`;
}

/** Terms of fewer than 3 characters (after folding) yield no trigram; they are matched by a scan. */
export function indexable(term: string): boolean {
  return hasTrigram(searchFold(term));
}

export function hasTrigram(folded: string): boolean {
  return [...folded].length >= TRIGRAM;
}

/** SQL of migration 005's triggers and index for one table on SQLite. */
export function sqliteIndexStatements(table: string, fields: readonly string[]): string[] {
  const fts = indexTable(table);
  const cols = fields.map((f) => `"${f}"`).join(', ');
  const folded = (row: string) => fields.map((f) => `search_fold(${row}."${f}")`).join(', ');
  return [
    `CREATE VIRTUAL TABLE "${fts}" USING fts5(${cols}, content='', contentless_delete=1, detail=full, ` +
      `tokenize="trigram case_sensitive 1")`,
    `INSERT INTO "${fts}" (rowid, ${cols}) SELECT id, ${folded(`"${table}"`)} FROM "${table}"`,
    `CREATE TRIGGER "${fts}_insert" AFTER INSERT ON "${table}" BEGIN ` +
      `INSERT INTO "${fts}" (rowid, ${cols}) VALUES (new.id, ${folded('new')}); END`,
    `CREATE TRIGGER "${fts}_delete" AFTER DELETE ON "${table}" BEGIN DELETE FROM "${fts}" WHERE rowid = old.id; END`,
    `CREATE TRIGGER "${fts}_update" AFTER UPDATE ON "${table}" WHEN ${sqliteFieldsChanged(fields)} BEGIN ` +
      `DELETE FROM "${fts}" WHERE rowid = old.id; ` +
      `INSERT INTO "${fts}" (rowid, ${cols}) VALUES (new.id, ${folded('new')}); END`,
  ];
}

/** 256 MB, or a sixteenth of a smaller machine's memory. */
const BULK_HASH_BYTES = Math.min(256 * 1024 ** 2, Math.floor(totalmem() / 16));
const DEFAULT_HASH_BYTES = 1024 * 1024;

/**
 * For a bulk load on SQLite: drops the insert triggers; `finish` indexes the rows added in one
 * statement and restores them (a rollback undoes all: SQLite's DDL is transactional).
 * Undefined when the table has no index.
 */
export function sqliteBulkIndex(
  conn: { prepare(sql: string): { run(...a: unknown[]): unknown; get(...a: unknown[]): unknown } },
  table: string,
  fields: readonly string[],
): (() => void) | undefined {
  const fts = indexTable(table);
  const { tokens } = tokenTables(table);
  const exists = (trigger: string) => conn.prepare("SELECT 1 AS y FROM sqlite_master WHERE type = 'trigger' AND name = ?").get(trigger);
  if (!exists(`${fts}_insert`)) return undefined;
  const withTokens = exists(`${tokens}_insert`) !== undefined;
  const [, fill, create] = sqliteIndexStatements(table, fields);
  const { top } = conn.prepare(`SELECT COALESCE(MAX(id), 0) AS top FROM "${table}"`).get() as { top: number };
  conn.prepare(`DROP TRIGGER "${fts}_insert"`).run();
  if (withTokens) conn.prepare(`DROP TRIGGER "${tokens}_insert"`).run();
  // A larger FTS5 `hashsize` for the load means fewer segments to merge (BENCHMARKS.md, import).
  // It is a row of the index's config, so the transaction holds it; the default is put back
  // after. Written into the SQL: FTS5 takes an integer, and better-sqlite3 binds a real.
  const setHash = (index: string, bytes: number) =>
    conn.prepare(`INSERT INTO "${index}" ("${index}", rank) VALUES ('hashsize', ${bytes})`).run();
  return () => {
    setHash(fts, BULK_HASH_BYTES);
    conn.prepare(`${fill} WHERE id > ?`).run(top);
    setHash(fts, DEFAULT_HASH_BYTES);
    conn.prepare(create).run();
    if (!withTokens) return;
    setHash(tokens, BULK_HASH_BYTES);
    for (const sql of sqliteTokenFill(table, fields, top)) conn.prepare(sql).run();
    setHash(tokens, DEFAULT_HASH_BYTES);
    conn.prepare(sqliteTokenInsertTrigger(table, fields)).run();
  };
}

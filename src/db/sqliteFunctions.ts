import type BetterSqlite3 from 'better-sqlite3';

/**
 * Modules whose `registerSqliteFunctions(conn)` adds SQL functions that every SQLite connection
 * needs (search's triggers call them on every write). Module paths rather than functions, so
 * that a connection's worker thread (sqliteThread/) loads the same ones.
 */
const modules = new Set<string>();

/** Adds a module (an absolute path, `require.resolve`d) whose functions every connection gets. */
export function addSqliteFunctions(modulePath: string): void {
  modules.add(modulePath);
}

/** The modules added so far, for a worker thread to load. */
export function sqliteFunctionModules(): string[] {
  return [...modules];
}

/** Registers every added module's functions on `conn`. */
export function registerSqliteFunctions(conn: BetterSqlite3.Database, from: readonly string[] = sqliteFunctionModules()): void {
  for (const path of from) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    (require(path) as { registerSqliteFunctions(c: BetterSqlite3.Database): void }).registerSqliteFunctions(conn);
  }
}

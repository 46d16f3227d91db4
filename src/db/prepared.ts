import type BetterSqlite3 from 'better-sqlite3';

/**
 * Statements kept prepared per SQLite connection: knex prepares every statement again at each run,
 * for texts that repeat from request to request. Bounded (an IN list's text varies): LRU.
 */
export const KEPT_STATEMENTS = 200;

/**
 * Makes `conn.prepare` hand back the statement it prepared last time for the same text. Safe while
 * every user runs a statement to its end before another can, and none changes its modes (`raw`,
 * `pluck`, `expand`, `safeIntegers`), which a later user would inherit.
 */
export function keepPrepared(conn: BetterSqlite3.Database, size = KEPT_STATEMENTS): void {
  const prepare = conn.prepare.bind(conn);
  const kept = new Map<string, BetterSqlite3.Statement>();
  conn.prepare = ((sql: string) => {
    let statement = kept.get(sql);
    if (statement) kept.delete(sql);
    else statement = prepare(sql);
    // Last in the map's order: the most recently used.
    kept.set(sql, statement);
    if (kept.size > size) kept.delete(kept.keys().next().value!);
    return statement;
  }) as typeof conn.prepare;
}

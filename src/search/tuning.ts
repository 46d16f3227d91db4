/**
 * Where search changes strategy (docs/search.md, "The knobs"). None changes what matches, only the
 * cost; the defaults come from measurements at 1,000,000 posts (BENCHMARKS.md). Tests pass others
 * to createSearch to reach every path on tables of a few rows.
 */
export const defaultTuning = Object.freeze({
  /**
   * Matches up to this many are narrowed by filters and sorted by the database through a list of
   * their ids; more are walked in the order, and filtered by reading the filters' ids.
   */
  inList: 20_000,
  /** A page walks the order's index when it expects to pass at most this many entries per match. */
  walkPerMatch: 4,
  /** Rows checked with the scan's predicate (or sorted by id list) above this wait for the search limiter. */
  checkedInline: 2000,
  /** Costly search statements run at once per process (limiter.ts); from DB_SEARCH_TURNS. */
  searchTurns: 1,
  /** The connections in a process's pool (DB_POOL_SIZE), which the search limiter stays below. */
  poolSize: 10,
});

export type SearchTuning = { -readonly [K in keyof typeof defaultTuning]: number };

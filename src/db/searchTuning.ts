/**
 * Where search changes strategy (trigrams.ts, matches.ts), from measurements at
 * 1,000,000 posts (BENCHMARKS.md). One object, so that tests can move them and reach every path
 * on tables of a few rows.
 */
export const searchTuning = {
  /** Above this many candidates, terms are read as phrases (the predicate costs ~10 µs a row). */
  maxCandidates: 2000,
  /**
   * SQLite: terms whose rarest trigram is in at most this share of the sampled rows are found
   * through the token index (tokens.ts); commoner ones through the trigram index, which counted
   * `the` (in every post of 1,000,000) in 53 ms where the OR of its 36 tokens took 200.
   */
  tokenShare: 0.2,
  /** SQLite: a term in more tokens of the vocabulary than this is left to the trigram index. */
  termTokens: 500,
  /** SQLite: a search whose token query would be longer than this is left to the trigram index. */
  tokenQueryChars: 64 * 1024,
  /** More matches than this are not held for the page: they are counted by the index. */
  maxHeld: 20_000,
  /**
   * SQLite: a search of several terms by the token index that matches at most this many records
   * has their ids read with the count, and its page read among them (json_group_array: about
   * 0.02 ms per 500 ids; building it for 8,276 that are then dropped cost 0.23 ms).
   */
  heldReads: 1000,
  /**
   * SQLite: a page walks the order's index when it expects to pass at most this many entries;
   * else it looks each match up and sorts their keys (page 1 of terms in 1,000,000 posts, by the
   * token index: 469 matches, 1.04 ms walking 21,000 entries against 0.52 looked up; 728: 0.97
   * against 0.68; 979: 0.78 against 1.08; 1,095: 0.50 against 1.17).
   */
  walkEntries: 12_000,
  /**
   * MySQL: a page walks the order's index when it expects to pass at most this many entries per
   * match; else it looks each match up and sorts them (about 1 µs an entry walked against 7 a
   * match looked up and sorted, at 1,000,000 posts on MariaDB).
   */
  walkPerMatch: 5,
  /**
   * A page of more matches than are held walks the order's index with the scan's predicate when
   * it expects to check at most this many rows (listRecords; about 5 µs a row).
   */
  walkRows: 5000,
  /**
   * SQLite: checking a row with the scan's predicate costs about this many times reading a match
   * again from the token index (about 5 µs against 0.2): it decides when a page of such a search
   * walks with the predicate (records.ts). `ouplip` at 1,000,000 posts: 4.4 ms a search walking,
   * 9.8 reading its 44,507 matches again; `échaç`: 3.0 ms reading its 8,276 again.
   */
  rowCheckCost: 25,
  /** MySQL: the newest records whose text tells how common each term is (wordSearch.ts); smaller tables have no common term. */
  sample: 200,
  /** MySQL: a word in at least this share of the records sampled is dense (denseWords.ts). */
  denseShare: 0.9,
  /**
   * MySQL: a search's statements that have InnoDB FULLTEXT or the scan's predicate visit every
   * match (a count, a page) run this many at a time in a process, the others waiting their turn
   * (searchGate.ts). The service sets it from DB_SEARCH_TURNS.
   */
  searchTurns: 1,
  /**
   * MySQL: the connections in a process's pool (DB_POOL_SIZE); the search turns, and the
   * searches waiting ready for one with their connection, stay below it (searchGate.ts).
   */
  poolSize: 10,
};

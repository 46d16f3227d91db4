/**
 * Where search changes strategy (docs/search.md, "The knobs"). None changes what matches, only the
 * cost; the defaults come from measurements at 1,000,000 posts (BENCHMARKS.md). Tests pass others
 * to createSearch to reach every path on tables of a few rows.
 */
export const defaultTuning = Object.freeze({
  /** SQLite: above this many candidates from the rarest trigrams, terms are read as phrases. */
  maxCandidates: 2000,
  /** SQLite: terms go to the token index when the rarest trigram of one, or each term itself, is in at most this share of the sample. */
  tokenShare: 0.2,
  /** SQLite: a term in more tokens of the vocabulary than this is left to the trigram index. */
  termTokens: 500,
  /** SQLite: a search whose token query would be longer than this is left to the trigram index. */
  tokenQueryChars: 64 * 1024,
  /** More matches than this are not preloaded for the page (matches.ts): they are counted by the index. */
  maxPreloaded: 20_000,
  /** SQLite: a several-term token search of at most this many matches reads their ids with the count. */
  preloadedWithCount: 1000,
  /** SQLite: a page walks the order's index when it expects to pass at most this many entries. */
  walkEntries: 12_000,
  /** MySQL: a page walks the order's index when it expects to pass at most this many entries per match. */
  walkPerMatch: 5,
  /** A page of more matches than are preloaded walks with the scan's predicate when it expects to check at most this many rows. */
  walkRows: 5000,
  /** SQLite: the scan's predicate on a row costs about this many times reading a match again from the token index. */
  rowCheckCost: 25,
  /** MySQL: the newest records whose text tells how common each term is (mysql/wordSample.ts). */
  sample: 200,
  /** MySQL: a word in at least this share of the records sampled is dense (mysql/denseWords.ts). */
  denseShare: 0.9,
  /** MySQL: 1 answers searches the word index decides from the block postings (mysql/postings.ts); 0 from FULLTEXT. */
  postings: 1,
  /** MySQL: a page of at most this many postings matches reads them by id; more walk the order's index (BENCHMARKS.md, the floor of block postings: the two cross near 600). */
  postingsInList: 600,
  /** MySQL: a page of the postings' matches walks at most this many entries of the order's index. */
  postingsWalk: 200_000,
  /** MySQL: costly search statements run at once per process (limiter.ts); from DB_SEARCH_TURNS. */
  searchTurns: 1,
  /** MySQL: the connections in a process's pool (DB_POOL_SIZE), which the search limiter stays below. */
  poolSize: 10,
});

export type SearchTuning = { -readonly [K in keyof typeof defaultTuning]: number };

import { createSearch, defaultTuning, type Search, type SearchTuning } from '../../src/search';

/**
 * A search engine whose tuning a test changes between searches, to reach every path on tables of
 * a few rows: `tune` makes a new engine with the change, `reset` one with the defaults.
 */
export interface TunableSearch extends Search {
  tune(change: Partial<SearchTuning>): void;
  reset(): void;
}

export function tunableSearch(initial: Partial<SearchTuning> = {}): TunableSearch {
  let current: Search = createSearch(initial);
  return {
    list: (pool, spec, request) => current.list(pool, spec, request),
    seek: (pool, spec, request) => current.seek(pool, spec, request),
    stats: () => current.stats(),
    get tuning() {
      return current.tuning;
    },
    tune(change) {
      current = createSearch({ ...current.tuning, ...change });
    },
    reset() {
      current = createSearch(initial);
    },
  };
}

export { defaultTuning };

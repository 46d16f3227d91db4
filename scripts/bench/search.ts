// The search scenarios of `npm run bench -- --search`, over the posts of the realistic corpus
// (corpus.ts), timed one client at a time in process (the database work, not HTTP): page 1 with
// its count as the list handler runs it, through the index where the database has one, and the
// scan of the same terms (the baseline), whose count must agree.
import { listRecords, seekRecords } from '../../src/handlers/pages';
import type { Db } from '../../src/db/connection';
import type { OrderKey } from '../../src/db/order';
import { applySearch, createSearch, foldCollation, parseSearch } from '../../src/search';
import { vocabulary } from './corpus';

export interface SearchScenario {
  title: string;
  search: string;
  /** Cursor mode: page 1 with no count. */
  cursor?: boolean;
}

const words = vocabulary();
const accented = words.slice(2000).find((w) => /[éèêàôîûë]/.test(w) && w.length >= 6)!;
export const SEARCH_SCENARIOS: SearchScenario[] = [
  { title: 'rare term', search: words[25000] },
  { title: 'medium term', search: words[1500] },
  { title: 'two terms', search: `${words[800]} ${words[3000]}` },
  { title: 'phrase', search: '"and the"' },
  { title: 'substring inside words', search: 'ouplip' },
  { title: 'upper-case accented term', search: accented.toUpperCase() },
  { title: 'common term', search: 'where' },
  { title: 'two terms, one common', search: `where ${words[800]}` },
  { title: 'very common term', search: 'the' },
  { title: 'cursor-mode page 1', search: words[1500], cursor: true },
];

/**
 * A search box without debounce: each of these typed one character at a time, a query per
 * keystroke from the first (a rare, a medium, a common and an accented word, then a second
 * word after a common one). The typing scenario cycles through every keystroke.
 */
export const TYPED = [words[25000], words[1500], 'where', accented, `where ${words[800]}`];
export const KEYSTROKES = TYPED.flatMap((typed) => Array.from({ length: typed.length }, (_, i) => typed.slice(0, i + 1)));

/** One client alone: searches that no index of words answers without reading rows. */
export const LONE_QUERIES = [
  'e',
  'th',
  'é',
  '"e b"',
  '"and the"',
  'the',
  'where the',
  // The longest search the spec allows: 200 characters.
  Array.from({ length: 40 }, (_, i) => words[i % 50])
    .join(' ')
    .slice(0, 200),
];

const spec = { table: 'posts', searchFields: ['title', 'content'] };
const order = [
  { column: 'created_at', desc: true },
  { column: 'id', desc: true },
] as unknown as OrderKey[];

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

export interface OneClient {
  /** Matching records (undefined in cursor mode, which counts nothing). */
  count?: number;
  /** Milliseconds of each run; the first is cold. */
  times: number[];
}

/** `runs` searches in a row, as the list handler (or, in cursor mode, the cursor handler) runs them. */
export async function searchOneClient(db: Db, scenario: SearchScenario, runs: number): Promise<OneClient> {
  const terms = parseSearch(scenario.search);
  const search = createSearch();
  const times: number[] = [];
  let count: number | undefined;
  for (let r = 0; r < runs; r++) {
    times.push(
      await time(async () => {
        if (scenario.cursor) await seekRecords(db, spec, { terms, filters: [], order, backward: false, limit: 11 }, search);
        else count = (await listRecords(db, spec, { terms, filters: [], order, page: 1, pageSize: 10 }, search)).count;
      }),
    );
  }
  return { count, times };
}

/** The baseline: count and page 1 by the scan's predicate over every row, as before the index. */
export async function scanOnce(db: Db, search: string): Promise<{ ms: number; count: number }> {
  const q = db('posts');
  applySearch(q, spec.searchFields, parseSearch(search), await foldCollation(db));
  let count = 0;
  const ms = await time(async () => {
    const [{ n }] = await q.clone().count({ n: '*' });
    count = Number(n);
    await q
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(10);
  });
  return { ms, count };
}

// A realistic search corpus for the benchmark: posts of about 1 KB whose words follow Zipf's
// law over a vocabulary of VOCABULARY words (English and made-up French-like words with
// accents), so that a search term can be very common, medium or rare, as in real text. The
// seed's 250-word list makes every term common. Deterministic: row i depends only on i.
import { mix, Rng } from '../seed/random';
import { dbTimestamp } from '../../src/db/time';
import type { RowSource } from '../seed/data';
import { WORDS } from '../seed/words';

export const VOCABULARY = 30_000;
/** Zipf exponent of word ranks, as measured in English and French text (about 1). */
const ZIPF_S = 1.05;

const ONSETS = [
  '',
  'b',
  'c',
  'ch',
  'd',
  'f',
  'g',
  'gr',
  'j',
  'l',
  'm',
  'n',
  'p',
  'pr',
  'qu',
  'r',
  's',
  't',
  'tr',
  'v',
  'br',
  'pl',
  'cl',
  'fl',
];
const NUCLEI = ['a', 'e', 'i', 'o', 'u', 'é', 'è', 'ê', 'ou', 'ai', 'au', 'eu', 'oi', 'an', 'en', 'on', 'ô', 'à', 'î', 'û', 'ie', 'ë'];
const CODAS = ['', '', '', 'n', 'r', 's', 't', 'l', 'x', 'm', 'ç', 'rt', 'st'];

/** The vocabulary, most frequent first: the seed's English words, then generated ones. */
export function vocabulary(size = VOCABULARY): string[] {
  const words = [...new Set(WORDS)];
  const seen = new Set(words);
  const rng = new Rng(20261123);
  while (words.length < size) {
    const syllables = rng.int(1, 4);
    let w = '';
    for (let k = 0; k < syllables; k++) w += rng.pick(ONSETS) + rng.pick(NUCLEI) + (k === syllables - 1 ? rng.pick(CODAS) : '');
    if (w.length < 2 || seen.has(w)) continue;
    seen.add(w);
    // Shuffle generated words into the ranks so that accented ones are common and rare alike.
    words.splice(WORDS.length + Math.floor(rng.next() * (words.length - WORDS.length + 1)), 0, w);
  }
  return words;
}

/** Maps a uniform draw to a Zipf-distributed rank through a table (fast for 100 M draws). */
export class Zipf {
  private readonly table: Uint16Array | Uint32Array;

  constructor(
    readonly size: number,
    s = ZIPF_S,
    resolution = 1 << 22,
  ) {
    const weights = new Float64Array(size);
    let total = 0;
    for (let r = 0; r < size; r++) total += weights[r] = 1 / Math.pow(r + 1, s);
    this.table = size < 65536 ? new Uint16Array(resolution) : new Uint32Array(resolution);
    let r = 0;
    let cumulative = weights[0] / total;
    for (let k = 0; k < resolution; k++) {
      while ((k + 0.5) / resolution > cumulative && r < size - 1) cumulative += weights[++r] / total;
      this.table[k] = r;
    }
  }

  rank(u: number): number {
    return this.table[Math.floor(u * this.table.length)];
  }

  /** The share of draws that give `rank`. */
  static probability(rank: number, size: number, s = ZIPF_S): number {
    let total = 0;
    for (let r = 0; r < size; r++) total += 1 / Math.pow(r + 1, s);
    return 1 / Math.pow(rank + 1, s) / total;
  }
}

const START = Date.UTC(2019, 0, 1);
const END = Date.UTC(2025, 10, 1);

export function corpusPosts(count: number, seed = 7): RowSource & { words: string[] } {
  const words = vocabulary();
  const zipf = new Zipf(words.length);
  const sentence = (rng: Rng, min: number, max: number) => {
    const n = rng.int(min, max);
    const out: string[] = new Array<string>(n);
    for (let k = 0; k < n; k++) out[k] = words[zipf.rank(rng.next())];
    const first = out[0];
    out[0] = first.charAt(0).toUpperCase() + first.slice(1);
    return out.join(' ');
  };
  return {
    table: 'posts',
    words,
    columns: ['title', 'content', 'author', 'created_at', 'updated_at'],
    row(i) {
      const rng = new Rng(mix(seed, i));
      const title = sentence(rng, 3, 8).slice(0, 100);
      let content = '';
      while (content.length < 900) content += `${sentence(rng, 6, 16)}${rng.pick(['.', '.', '.', '!', '?'])} `;
      const created = dbTimestamp(START + Math.floor(((END - START) * (i + rng.next())) / Math.max(1, count)));
      return [title, content.trimEnd(), `author${rng.int(1, 5000)}`, created, created];
    },
  };
}

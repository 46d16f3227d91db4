// Deterministic, realistic rows for each collection, column for column as the service stores
// them (src/db/migrations.ts) and within the spec's rules. Row i depends only on (seed, i, count),
// so a load can be split into batches, run in any order, and repeated exactly.
import { mix, Rng } from './random';
import { asciiName, EMAIL_DOMAINS, FIRST_NAMES, GENRES, LAST_NAMES, WORDS } from './words';

export type Value = string | number | null;
export const COLLECTIONS = ['posts', 'products', 'books', 'users', 'tasks'] as const;
export type CollectionName = (typeof COLLECTIONS)[number];

export interface RowSource {
  table: CollectionName;
  /** Column names, in the order of each row's values. */
  columns: readonly string[];
  /** Row i (0-based) of the load; its id is i + 1. */
  row(i: number): Value[];
}

// created_at spreads over fixed past years (not relative to today, so loads are repeatable),
// rising with id as records that were really created over time do.
const START = Date.UTC(2019, 0, 1);
const END = Date.UTC(2025, 10, 1);
const DAY = 86_400_000;

/** `2026-11-22 09:32:05.156`: the form the service stores (UTC, milliseconds). */
export function sqlTimestamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23).replace('T', ' ');
}

function sqlDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function words(rng: Rng, min: number, max: number): string[] {
  const n = rng.int(min, max);
  const out: string[] = new Array(n);
  for (let k = 0; k < n; k++) out[k] = rng.pickSkewed(WORDS);
  return out;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Words joined and cut at a word boundary to at most `maxChars` code points. */
function phrase(rng: Rng, min: number, max: number, maxChars: number): string {
  let text = capitalize(words(rng, min, max).join(' '));
  while ([...text].length > maxChars) text = text.slice(0, text.lastIndexOf(' '));
  return text;
}

function sentence(rng: Rng): string {
  return `${capitalize(words(rng, 6, 14).join(' '))}${rng.pick(['.', '.', '.', '!', '?'])}`;
}

function paragraphs(rng: Rng, min: number, max: number): string {
  const n = rng.int(min, max);
  const out: string[] = [];
  for (let p = 0; p < n; p++) {
    const s = rng.int(1, 3);
    const text: string[] = [];
    for (let k = 0; k < s; k++) text.push(sentence(rng));
    out.push(text.join(' '));
  }
  return out.join('\n\n');
}

function personName(rng: Rng): [string, string] {
  return [rng.pick(FIRST_NAMES), rng.pick(LAST_NAMES)];
}

/** A unique ISBN-13 for row i: 978, nine digits that are a bijection of i, a check digit. */
export function isbn13(i: number): string {
  const body = `978${String((i * 7919 + 12_345) % 1_000_000_000).padStart(9, '0')}`;
  let sum = 0;
  for (let k = 0; k < 12; k++) sum += Number(body[k]) * (k % 2 ? 3 : 1);
  return `${body}${(10 - (sum % 10)) % 10}`;
}

type Fields = (rng: Rng, i: number, created: number) => Value[];

const FIELDS: Record<CollectionName, { columns: string[]; values: Fields }> = {
  posts: {
    columns: ['title', 'content', 'author'],
    values: (rng) => [phrase(rng, 3, 9, 100), paragraphs(rng, 1, 4), personName(rng).join(' ')],
  },
  products: {
    columns: ['name', 'description', 'price', 'stock'],
    values: (rng) => [
      `${phrase(rng, 1, 3, 180)} ${rng.pick(['', 'Pro', 'Mini', 'XL', `M${rng.int(1, 999)}`])}`.trim(),
      rng.chance(0.1) ? '' : paragraphs(rng, 1, 2),
      // Prices spread over orders of magnitude, as a catalogue's do.
      (Math.exp(rng.next() * Math.log(10_000)) - 0.01).toFixed(2),
      rng.chance(0.1) ? 0 : rng.int(1, 5000),
    ],
  },
  books: {
    columns: ['title', 'author', 'genre', 'published_date', 'isbn'],
    values: (rng, i) => [
      phrase(rng, 1, 6, 200),
      personName(rng).join(' '),
      rng.pick(GENRES),
      rng.chance(0.1) ? null : sqlDate(Date.UTC(1850, 0, 1) + rng.int(0, 175 * 365) * DAY),
      isbn13(i),
    ],
  },
  users: {
    columns: ['username', 'email', 'first_name', 'last_name'],
    values: (rng, i) => {
      const [first, last] = personName(rng);
      // The number ends every user name and follows a letter, so names are unique.
      const username = `${asciiName(first)}${rng.pick(['.', '_', ''])}${asciiName(last)}${i + 1}`;
      return [username, `${username}@${rng.pick(EMAIL_DOMAINS)}`, rng.chance(0.05) ? '' : first, rng.chance(0.05) ? '' : last];
    },
  },
  tasks: {
    columns: ['title', 'description', 'status', 'priority', 'due_date'],
    values: (rng, _i, created) => [
      phrase(rng, 3, 8, 200),
      rng.chance(0.2) ? '' : paragraphs(rng, 1, 2),
      rng.pick(['todo', 'todo', 'in_progress', 'done', 'done', 'done']),
      rng.pick(['low', 'medium', 'medium', 'high']),
      rng.chance(0.3) ? null : sqlDate(created + rng.int(0, 60) * DAY),
    ],
  },
};

export function rowSource(table: CollectionName, count: number, seed: number): RowSource {
  const { columns, values } = FIELDS[table];
  const step = (END - START) / Math.max(count, 1);
  // Each collection draws its own numbers, so that row i of posts and of tasks differ.
  const salted = (seed ^ Math.imul(COLLECTIONS.indexOf(table) + 1, 0x27d4eb2f)) >>> 0;
  return {
    table,
    columns: ['id', ...columns, 'created_at', 'updated_at'],
    row(i) {
      const rng = new Rng(mix(salted, i));
      const created = START + Math.floor((i + rng.next()) * step);
      // Most records are never edited; the rest were, some time in the following weeks.
      const updated = rng.chance(0.7) ? created : Math.min(END, created + Math.floor(rng.next() * 90 * DAY));
      return [i + 1, ...values(rng, i, created), sqlTimestamp(created), sqlTimestamp(updated)];
    },
  };
}

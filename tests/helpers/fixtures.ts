/**
 * One valid body per collection, plus what each collection's contract says about search and
 * uniqueness, so that tests can loop over all five. `unique` makes unique fields distinct.
 */
export interface Fixture {
  name: 'posts' | 'products' | 'books' | 'users' | 'tasks';
  /** A valid create body; `n` makes unique fields (and text) distinct. */
  valid(n: number): Record<string, unknown>;
  /** The defaults of optional fields, as a created record shows them. */
  defaults: Record<string, unknown>;
  /** A valid PATCH body that changes something. */
  patch: Record<string, unknown>;
  searchFields: string[];
  /** A client field that is not searched, and holds text. */
  unsearchedText?: string;
  uniqueFields: string[];
  maxPageSize: number;
}

const isbn13 = (n: number) => String(9780000000000 + n);

export const fixtures: Fixture[] = [
  {
    name: 'posts',
    valid: (n) => ({ title: `Post ${n}`, content: `Content of post ${n}`, author: `author${n}` }),
    defaults: {},
    patch: { title: 'Patched title' },
    searchFields: ['title', 'content'],
    unsearchedText: 'author',
    uniqueFields: [],
    maxPageSize: 10,
  },
  {
    name: 'products',
    valid: (n) => ({ name: `Product ${n}`, price: '19.99' }),
    defaults: { description: '', stock: 0 },
    patch: { price: '5', stock: 3 },
    searchFields: ['name', 'description'],
    uniqueFields: [],
    maxPageSize: 100,
  },
  {
    name: 'books',
    valid: (n) => ({ title: `Book ${n}`, author: `Writer ${n}`, isbn: isbn13(n) }),
    defaults: { genre: '', published_date: null },
    patch: { genre: 'Fantasy', published_date: '1937-09-21' },
    searchFields: ['title', 'author'],
    unsearchedText: 'genre',
    uniqueFields: ['isbn'],
    maxPageSize: 100,
  },
  {
    name: 'users',
    valid: (n) => ({ username: `user${n}`, email: `user${n}@example.com` }),
    defaults: { first_name: '', last_name: '' },
    patch: { first_name: 'Ada', last_name: 'Lovelace' },
    searchFields: ['username', 'email'],
    unsearchedText: 'first_name',
    uniqueFields: ['username', 'email'],
    maxPageSize: 100,
  },
  {
    name: 'tasks',
    valid: (n) => ({ title: `Task ${n}` }),
    defaults: { description: '', status: 'todo', priority: 'medium', due_date: null },
    patch: { status: 'done', priority: 'high', due_date: '2026-12-01' },
    searchFields: ['title', 'description'],
    uniqueFields: [],
    maxPageSize: 100,
  },
];

/** The text field that a search test writes into, per collection (the first search field). */
export const byName = Object.fromEntries(fixtures.map((f) => [f.name, f])) as Record<Fixture['name'], Fixture>;

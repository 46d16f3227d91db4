import type { OpenAPIV3 } from 'openapi-types';
import { collections } from '../../../src/collections';
import { clientProperties, loadSpec, pointer } from '../../../src/spec';
import { startTestApp, type TestApp } from '../../helpers/app';
import { fixtures } from '../../helpers/fixtures';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const pathOf = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');

/** Follows `next` from `first` to the end, then `previous` back; returns the ids seen each way. */
async function walk(first: string): Promise<{ forward: number[]; backward: number[]; pages: number }> {
  const forward: number[] = [];
  let url: string | null = first;
  let last = first;
  let pages = 0;
  while (url) {
    const res: { status: number; body: any } = await app.request('GET', url);
    expect(res.status).toBe(200);
    expect(res.body.count).toBeNull();
    forward.push(...res.body.results.map((r: { id: number }) => r.id));
    last = url;
    url = res.body.next && pathOf(res.body.next);
    pages++;
  }
  const lastPage = await app.request('GET', last);
  const backward: number[] = lastPage.body.results.map((r: { id: number }) => r.id);
  url = lastPage.body.previous && pathOf(lastPage.body.previous);
  while (url) {
    const res: { status: number; body: any } = await app.request('GET', url);
    backward.unshift(...res.body.results.map((r: { id: number }) => r.id));
    url = res.body.previous && pathOf(res.body.previous);
  }
  return { forward, backward, pages };
}

/** Every id of the list in page-number mode, the reference order for the same query. */
async function byPages(query: string): Promise<number[]> {
  const ids: number[] = [];
  for (let page = 1; ; page++) {
    const res = await app.request('GET', `${query}&page=${page}`);
    if (res.status === 404) return ids;
    ids.push(...res.body.results.map((r: { id: number }) => r.id));
    if (!res.body.next) return ids;
  }
}

describe.each(fixtures.map((f) => [f.name, f] as const))('%s', (name, f) => {
  const marker = `cur${name}`;
  beforeAll(async () => {
    for (let i = 0; i < 23; i++) {
      const body = f.valid(5000 + i);
      body[f.searchFields[0]] = `${marker} ${body[f.searchFields[0]] as string}`;
      if (name === 'users') body.username = `${marker}${i}`;
      expect((await app.request('POST', `/api/${name}/`, { body })).status).toBe(201);
    }
    // Ties in created_at, so that the id tie-break decides the order.
    await app.database.db(name).update({ created_at: '2026-01-01 00:00:00.000' });
  });

  const orders: [string, { given: string }][] = [
    ['default order', { given: '' }],
    ['id ascending', { given: '&ordering=id' }],
    ['updated_at descending', { given: '&ordering=-updated_at' }],
  ];
  test.each(orders)('%s: cursor pages visit what page numbers visit, forward and back', async (_n, { given }) => {
    const query = `/api/${name}/?page_size=4&search=${marker}${given}`;
    const want = await byPages(query);
    expect(want.length).toBe(23);
    const { forward, backward, pages } = await walk(`${query}&cursor=`);
    expect(forward).toEqual(want);
    expect(backward).toEqual(want);
    expect(pages).toBe(6);
  });

  test('the first page has no previous; the links keep the other parameters', async () => {
    const res = await app.request('GET', `/api/${name}/?cursor=&page_size=5&search=${marker}&foo=bar`);
    expect(res.status).toBe(200);
    expect(res.body.previous).toBeNull();
    const next = new URL(res.body.next);
    expect(next.searchParams.get('page_size')).toBe('5');
    expect(next.searchParams.get('search')).toBe(marker);
    expect(next.searchParams.get('foo')).toBe('bar');
    expect(next.searchParams.get('cursor')).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  const bad: [string, { given: (cursor: string) => string; want: RegExp }][] = [
    [
      'a cursor altered by one character',
      { given: (c) => `&search=${marker}&cursor=${c.slice(0, -1)}${c.endsWith('A') ? 'B' : 'A'}`, want: /altered/ },
    ],
    ['a cursor cut short', { given: (c) => `&search=${marker}&cursor=${c.slice(0, 10)}`, want: /altered/ }],
    // As long as a signature in characters, longer in bytes (timingSafeEqual threw: a 500).
    [
      'a cursor whose signature ends in a character over one byte',
      { given: (c) => `&search=${marker}&cursor=${c.slice(0, -1)}${encodeURIComponent('é')}`, want: /altered/ },
    ],
    ['a cursor from another search', { given: (c) => `&search=${marker}x&cursor=${c}`, want: /another ordering, filter or search/ }],
    [
      'a cursor from another ordering',
      { given: (c) => `&search=${marker}&ordering=id&cursor=${c}`, want: /another ordering, filter or search/ },
    ],
    ['a cursor with page', { given: (c) => `&search=${marker}&cursor=${c}&page=2`, want: /cannot be combined with page/ }],
  ];
  test.each(bad)('%s is 400 naming cursor', async (_n, { given, want }) => {
    const first = await app.request('GET', `/api/${name}/?cursor=&page_size=4&search=${marker}`);
    const cursor = new URL(first.body.next).searchParams.get('cursor')!;
    const res = await app.request('GET', `/api/${name}/?page_size=4${given(cursor)}`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'cursor', message: expect.stringMatching(want) }]);
  });
});

describe('cursor pages with ordering on a nullable field and a ranked field', () => {
  beforeAll(async () => {
    const rows = [
      { title: 'cn a', priority: 'high', due_date: null },
      { title: 'cn b', priority: 'low', due_date: '2026-03-01' },
      { title: 'cn c', priority: 'medium', due_date: null },
      { title: 'cn d', priority: 'high', due_date: '2026-01-01' },
      { title: 'cn e', priority: 'low', due_date: '2026-03-01' },
      { title: 'cn f', priority: 'medium', due_date: '2026-02-01' },
      { title: 'cn g', priority: 'high', due_date: null },
    ];
    for (const body of rows) expect((await app.request('POST', '/api/tasks/', { body })).status).toBe(201);
  });

  test.each([
    ['due_date ascending (nulls first)', { given: 'due_date' }],
    ['due_date descending (nulls last)', { given: '-due_date' }],
    ['priority by rank, then title', { given: '-priority,title' }],
    ['due_date then priority', { given: 'due_date,-priority' }],
  ])('%s', async (_n, { given }) => {
    const query = `/api/tasks/?page_size=2&search=cn&ordering=${given}`;
    const want = await byPages(query);
    expect(want.length).toBe(7);
    const { forward, backward } = await walk(`${query}&cursor=`);
    expect(forward).toEqual(want);
    expect(backward).toEqual(want);
  });
});

// A cursor holds its boundary row's values of the ordering's keys (src/handlers/cursor.ts), so
// its length grows with them; the spec bounds `cursor`, and the service must take back every
// cursor it gives. The longest a collection can give, from the spec: each key's longest JSON (a
// string of maxLength characters that JSON writes as \u0001, six bytes each; an enum's longest
// value; a value only a pattern bounds, a price of at most 11 characters, counted as 32), as many
// keys as `ordering` takes, and `id`.
describe('the longest cursor each collection gives fits the spec', () => {
  const spec = loadSpec();
  const parameters = spec.components!.parameters as Record<string, OpenAPIV3.ParameterObject>;
  const maxLength = (parameters.cursor.schema as OpenAPIV3.SchemaObject).maxLength!;
  test.each(collections.map((c) => [c.name, c] as const))('%s', (name, c) => {
    const ordering = parameters[`${name}_ordering`].schema as OpenAPIV3.ArraySchemaObject;
    const fields = [...new Set(((ordering.items as OpenAPIV3.SchemaObject).enum as string[]).map((k) => k.replace(/^-/, '')))];
    const properties = clientProperties(spec, c.resource);
    const longest = (field: string): number => {
      const given = properties[field] as OpenAPIV3.SchemaObject | OpenAPIV3.ReferenceObject | undefined;
      const p = (given && '$ref' in given ? pointer(spec, given.$ref) : given) as OpenAPIV3.SchemaObject | undefined;
      if (!p || p.type !== 'string') return 24; // id, a timestamp's number of the database, a number, null
      if (p.format === 'date-time' || p.format === 'date') return 32;
      const chars = p.maxLength ?? (p.enum ? Math.max(...p.enum.map((v) => String(v).length)) : p.pattern ? 32 : Infinity);
      return 6 * chars + 2;
    };
    const keys = fields
      .map(longest)
      .sort((a, b) => b - a)
      .slice(0, ordering.maxItems);
    const payload = JSON.stringify({ d: 'n', k: [], f: 'f'.repeat(16) }).length + [...keys, longest('id')].reduce((a, b) => a + b + 1, 0);
    const cursor = Math.ceil((payload * 4) / 3) + 1 + 22;
    expect(cursor).toBeLessThanOrEqual(maxLength);
  });

  test('books ordered by a title and an author of control characters: the next link is followed', async () => {
    const f = fixtures.find((x) => x.name === 'books')!;
    for (let i = 0; i < 2; i++) {
      const res = await app.request('POST', '/api/books/', {
        body: { ...f.valid(900 + i), title: '\u0001'.repeat(200), author: '\u0001'.repeat(100) },
      });
      expect(res.status).toBe(201);
    }
    const first = await app.request('GET', '/api/books/?cursor=&page_size=1&ordering=title,author');
    expect(first.status).toBe(200);
    expect(first.body.next.length).toBeGreaterThan(2000);
    const next = await app.request('GET', pathOf(first.body.next));
    expect(next.status).toBe(200);
  });
});

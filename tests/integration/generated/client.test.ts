// The API as a consumer drives it: openapi-fetch typed by src/generated (what `openapi-typescript`
// makes of /openapi.json), against the listening app. Nothing here restates a path, a body or a
// response shape by hand; if the spec changes shape, this file stops compiling.
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from '../../../src/generated/openapi';
import { collections, type ResourceName } from '../../../src/collections';
import { PROBLEM_TYPES } from '../../../src/problems';
import { startTestApp, type TestApp } from '../../helpers/app';
import { byName } from '../../helpers/fixtures';
import { assertMatchesContract } from '../../helpers/contract';

type S = components['schemas'];
type Problem = S['Problem'];
type Resource = ResourceName;
/** The list parameters that every collection shares (each has its own ordering and filters). */
type Query = Pick<NonNullable<paths['/api/books/']['get']['parameters']['query']>, 'page' | 'page_size' | 'search'>;

/** What every collection offers, as the typed client exposes it (status, then body or problem). */
interface Api<R extends Resource> {
  list(query: Query): Promise<Answer<S[`${R}Page`]>>;
  create(body: S[`${R}Write`]): Promise<Answer<S[R]>>;
  get(id: number): Promise<Answer<S[R]>>;
  replace(id: number, body: S[`${R}Write`]): Promise<Answer<S[R]>>;
  update(id: number, body: S[`${R}Patch`]): Promise<Answer<S[R]>>;
  remove(id: number): Promise<Answer<undefined>>;
  bulkCreate(body: S[`${R}Write`][]): Promise<Answer<{ results: S[R][] }>>;
  bulkDelete(ids: number[]): Promise<Answer<undefined>>;
}
type Answer<T> = { status: number; data?: T; error?: Problem };

interface Case<R extends Resource> {
  api: (client: Client<paths, 'application/json'>) => Api<R>;
  /** A valid create body whose first search field holds `text`; `n` keeps unique fields apart. */
  valid(n: number, text: string): S[`${R}Write`];
  patch: S[`${R}Patch`];
  /** What a create or replace with `valid(n, text)` leaves at the defaults. */
  defaults: Partial<S[R]>;
}
type Fields = Record<string, unknown>;
type AnyCase = {
  api: (client: Client<paths, 'application/json'>) => Api<any>;
  valid(n: number, text: string): Fields;
  patch: Fields;
  defaults: Fields;
};

async function answer<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Answer<T>> {
  const { data, error, response } = await call;
  return { status: response.status, data, error: error as Problem | undefined };
}

/** Checks a row against its resource's types, then forgets them so that all five loop as one. */
function row<R extends Resource>(c: Case<R>): AnyCase {
  return c;
}

const id = (value: number) => ({ params: { path: { id: value } } });
const run = Date.now().toString().slice(-9);
const isbn = (n: number) => `9${run}${String(n).padStart(3, '0')}`;

const typed = {
  posts: row<'Post'>({
    api: (c) => ({
      list: (query) => answer(c.GET('/api/posts/', { params: { query } })),
      create: (body) => answer(c.POST('/api/posts/', { body })),
      get: (n) => answer(c.GET('/api/posts/{id}/', id(n))),
      replace: (n, body) => answer(c.PUT('/api/posts/{id}/', { ...id(n), body })),
      update: (n, body) => answer(c.PATCH('/api/posts/{id}/', { ...id(n), body })),
      remove: (n) => answer(c.DELETE('/api/posts/{id}/', id(n))),
      bulkCreate: (body) => answer(c.POST('/api/posts/bulk/', { body })),
      bulkDelete: (ids) => answer(c.POST('/api/posts/bulk-delete/', { body: { ids } })),
    }),
    valid: (n, text) => ({ title: `${text} ${n}`, content: 'Typed content', author: `author${n}` }),
    patch: { author: 'patched' },
    defaults: {},
  }),
  products: row<'Product'>({
    api: (c) => ({
      list: (query) => answer(c.GET('/api/products/', { params: { query } })),
      create: (body) => answer(c.POST('/api/products/', { body })),
      get: (n) => answer(c.GET('/api/products/{id}/', id(n))),
      replace: (n, body) => answer(c.PUT('/api/products/{id}/', { ...id(n), body })),
      update: (n, body) => answer(c.PATCH('/api/products/{id}/', { ...id(n), body })),
      remove: (n) => answer(c.DELETE('/api/products/{id}/', id(n))),
      bulkCreate: (body) => answer(c.POST('/api/products/bulk/', { body })),
      bulkDelete: (ids) => answer(c.POST('/api/products/bulk-delete/', { body: { ids } })),
    }),
    valid: (n, text) => ({ name: `${text} ${n}`, price: `${n}.50` }),
    patch: { stock: 7, description: 'patched' },
    defaults: { description: '', stock: 0 },
  }),
  books: row<'Book'>({
    api: (c) => ({
      list: (query) => answer(c.GET('/api/books/', { params: { query } })),
      create: (body) => answer(c.POST('/api/books/', { body })),
      get: (n) => answer(c.GET('/api/books/{id}/', id(n))),
      replace: (n, body) => answer(c.PUT('/api/books/{id}/', { ...id(n), body })),
      update: (n, body) => answer(c.PATCH('/api/books/{id}/', { ...id(n), body })),
      remove: (n) => answer(c.DELETE('/api/books/{id}/', id(n))),
      bulkCreate: (body) => answer(c.POST('/api/books/bulk/', { body })),
      bulkDelete: (ids) => answer(c.POST('/api/books/bulk-delete/', { body: { ids } })),
    }),
    valid: (n, text) => ({ title: `${text} ${n}`, author: 'Typed Author', isbn: isbn(n) }),
    patch: { genre: 'Fantasy', published_date: '1937-09-21' },
    defaults: { genre: '', published_date: null },
  }),
  users: row<'User'>({
    api: (c) => ({
      list: (query) => answer(c.GET('/api/users/', { params: { query } })),
      create: (body) => answer(c.POST('/api/users/', { body })),
      get: (n) => answer(c.GET('/api/users/{id}/', id(n))),
      replace: (n, body) => answer(c.PUT('/api/users/{id}/', { ...id(n), body })),
      update: (n, body) => answer(c.PATCH('/api/users/{id}/', { ...id(n), body })),
      remove: (n) => answer(c.DELETE('/api/users/{id}/', id(n))),
      bulkCreate: (body) => answer(c.POST('/api/users/bulk/', { body })),
      bulkDelete: (ids) => answer(c.POST('/api/users/bulk-delete/', { body: { ids } })),
    }),
    valid: (n, text) => ({ username: `${text}.${n}`, email: `u${run}${n}@example.com` }),
    patch: { first_name: 'Ada', last_name: 'Lovelace' },
    defaults: { first_name: '', last_name: '' },
  }),
  tasks: row<'Task'>({
    api: (c) => ({
      list: (query) => answer(c.GET('/api/tasks/', { params: { query } })),
      create: (body) => answer(c.POST('/api/tasks/', { body })),
      get: (n) => answer(c.GET('/api/tasks/{id}/', id(n))),
      replace: (n, body) => answer(c.PUT('/api/tasks/{id}/', { ...id(n), body })),
      update: (n, body) => answer(c.PATCH('/api/tasks/{id}/', { ...id(n), body })),
      remove: (n) => answer(c.DELETE('/api/tasks/{id}/', id(n))),
      bulkCreate: (body) => answer(c.POST('/api/tasks/bulk/', { body })),
      bulkDelete: (ids) => answer(c.POST('/api/tasks/bulk-delete/', { body: { ids } })),
    }),
    valid: (n, text) => ({ title: `${text} ${n}`, description: 'Typed description' }),
    patch: { status: 'done', priority: 'high', due_date: '2026-12-01' },
    defaults: { description: '', status: 'todo', priority: 'medium', due_date: null },
  }),
};

/**
 * A collection added after these five is driven too, through the same client without its types
 * (its paths are not known to this file at compile time), with the bodies of its test fixture.
 */
function untyped(name: string): AnyCase {
  const f = byName[name];
  const path = (template: string) => template as never;
  return {
    api: (c) => ({
      list: (query) => answer(c.GET(path(`/api/${name}/`), { params: { query } } as never)),
      create: (body) => answer(c.POST(path(`/api/${name}/`), { body } as never)),
      get: (n) => answer(c.GET(path(`/api/${name}/{id}/`), id(n) as never)),
      replace: (n, body) => answer(c.PUT(path(`/api/${name}/{id}/`), { ...id(n), body } as never)),
      update: (n, body) => answer(c.PATCH(path(`/api/${name}/{id}/`), { ...id(n), body } as never)),
      remove: (n) => answer(c.DELETE(path(`/api/${name}/{id}/`), id(n) as never)),
      bulkCreate: (body) => answer(c.POST(path(`/api/${name}/bulk/`), { body } as never)),
      bulkDelete: (ids) => answer(c.POST(path(`/api/${name}/bulk-delete/`), { body: { ids } } as never)),
    }),
    valid: (n, text) => ({ ...f.valid(n), [f.searchFields[0]]: text }),
    patch: f.patch,
    defaults: f.defaults,
  };
}

const cases: Record<string, AnyCase> = {
  ...typed,
  ...Object.fromEntries(collections.filter((c) => !(c.name in typed)).map((c) => [c.name, untyped(c.name)])),
};

let app: TestApp;
let client: Client<paths, 'application/json'>;
beforeAll(async () => {
  app = await startTestApp();
  // Every answer the client receives is also checked against the spec, status included.
  const checked = async (request: Request): Promise<Response> => {
    const res = await fetch(request);
    const text = await res.clone().text();
    const body = (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text;
    await assertMatchesContract({
      method: request.method,
      path: new URL(request.url).pathname,
      status: res.status,
      headers: res.headers,
      body,
    });
    return res;
  };
  client = createClient<paths, 'application/json'>({ baseUrl: app.url, fetch: checked });
});
afterAll(() => app.close());

const notFound = (detail: RegExp, kind: 'not-found' | 'page-not-found' = 'not-found') => ({
  status: 404,
  error: {
    type: `/problems/${kind}`,
    title: PROBLEM_TYPES[kind].title,
    status: 404,
    detail: expect.stringMatching(detail),
    request_id: expect.any(String),
  },
});

describe.each(Object.entries(cases))('%s through the typed client', (_name, c) => {
  let api: Api<any>;
  const marker = `typed${Math.random().toString(36).slice(2, 10)}`;
  let created: any[];
  beforeAll(async () => {
    api = c.api(client);
    created = [];
    for (const n of [1, 2, 3]) {
      const res = await api.create(c.valid(n, marker));
      expect(res.status).toBe(201);
      created.push(res.data);
    }
  });

  test('create answers the record with its defaults', () => {
    expect(created[0]).toEqual({
      ...c.defaults,
      ...c.valid(1, marker),
      ...(_name === 'products' ? { price: '1.50' } : {}),
      id: expect.any(Number),
      created_at: expect.any(String),
      updated_at: created[0].created_at,
    });
  });

  const pages: [string, { given: Query; want: { results: number[]; next: boolean; previous: boolean } }][] = [
    ['page 1 of 2', { given: { page_size: 2 }, want: { results: [2, 1], next: true, previous: false } }],
    ['page 2 of 2', { given: { page_size: 2, page: 2 }, want: { results: [0], next: false, previous: true } }],
    ['all on one page', { given: { page_size: 10 }, want: { results: [2, 1, 0], next: false, previous: false } }],
  ];
  test.each(pages)('list with search: %s', async (_n, { given, want }) => {
    const res = await api.list({ search: marker, ...given });
    expect(res.status).toBe(200);
    expect(res.data).toEqual({
      count: 3,
      next: want.next ? expect.stringContaining(`search=${marker}`) : null,
      previous: want.previous ? expect.stringContaining('page=1') : null,
      results: want.results.map((i) => created[i]),
    });
  });

  test('a page past the end is a typed 404 problem', async () => {
    expect(await api.list({ search: marker, page_size: 2, page: 3 })).toEqual(notFound(/past the last page/, 'page-not-found'));
  });

  test('a bad page size is a typed 400 problem naming it', async () => {
    const res = await api.list({ page_size: 0 });
    expect(res).toEqual({
      status: 400,
      error: expect.objectContaining({ status: 400, errors: [{ field: 'page_size', message: expect.any(String) }] }),
    });
  });

  test('get, update, replace, delete, then get is 404', async () => {
    const record = created[0];
    expect(await api.get(record.id)).toEqual({ status: 200, data: record });

    const updated = await api.update(record.id, c.patch);
    expect(updated.status).toBe(200);
    expect(updated.data).toEqual({ ...record, ...c.patch, updated_at: expect.any(String) });

    const replaced = await api.replace(record.id, c.valid(1, `${marker}x`));
    expect(replaced.status).toBe(200);
    expect(replaced.data).toEqual({
      ...updated.data,
      ...c.defaults,
      ...c.valid(1, `${marker}x`),
      ...(_name === 'products' ? { price: '1.50' } : {}),
      updated_at: expect.any(String),
    });

    expect(await api.remove(record.id)).toEqual({ status: 204, data: undefined });
    expect(await api.get(record.id)).toEqual(notFound(new RegExp(`${record.id}`)));
  });

  test('bulk create answers the records in order; bulk delete removes them, all or none', async () => {
    const bodies = [4, 5].map((n) => c.valid(n, `${marker}bulk`));
    const made = await api.bulkCreate(bodies);
    expect(made.status).toBe(201);
    const ids = made.data!.results.map((r: { id: number }) => r.id);
    expect(made.data!.results).toEqual(bodies.map((b) => expect.objectContaining(b)));
    const missing = await api.bulkDelete([...ids, 9007199254740991]);
    expect(missing).toEqual({
      status: 404,
      error: expect.objectContaining({ errors: [{ field: 'ids[2]', message: expect.any(String) }] }),
    });
    expect((await api.get(ids[0])).status).toBe(200);
    expect(await api.bulkDelete(ids)).toEqual({ status: 204, data: undefined });
    expect((await api.get(ids[1])).status).toBe(404);
  });
});

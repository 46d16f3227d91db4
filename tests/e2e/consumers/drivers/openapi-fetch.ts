// openapi-typescript (types in ./openapi-typescript.ts from the served contract, its default
// options) and openapi-fetch, with no option but the base URL.
import createClient from 'openapi-fetch';
import type { components, paths } from './openapi-typescript';
import { type Answer, type Assert, type Collection, main, pad, type WriteTypedRight } from './drive';
import type { RequiredOf } from './expected';

type S = components['schemas'];
type Post = S['Post'];
type PostWrite = S['PostWrite'];
type PostPatch = S['PostPatch'];
type Product = S['Product'];
type ProductWrite = S['ProductWrite'];
type ProductPatch = S['ProductPatch'];
type Book = S['Book'];
type BookWrite = S['BookWrite'];
type BookPatch = S['BookPatch'];
type User = S['User'];
type UserWrite = S['UserWrite'];
type UserPatch = S['UserPatch'];
type Task = S['Task'];
type TaskWrite = S['TaskWrite'];
type TaskPatch = S['TaskPatch'];
type Problem = S['Problem'];
const api = createClient<paths>({ baseUrl: process.argv[2] });
const problem = (a: Answer<unknown>) => a.error as Problem | undefined;

const posts: Collection<PostWrite, PostPatch, Post> = {
  name: 'posts',
  valid: (n) => ({ title: `Fetch post ${n}`, content: `fetch content ${n}`, author: `fetch${n}` }),
  patch: { title: 'Patched by openapi-fetch' },
  create: (body) => api.POST('/api/posts/', { body }),
  list: (n) => api.GET('/api/posts/', { params: { query: { search: `fetch content ${n}`, author: `fetch${n}`, ordering: ['-id'] } } }),
  get: (id) => api.GET('/api/posts/{id}/', { params: { path: { id } } }),
  update: (id, body, ifMatch) => api.PATCH('/api/posts/{id}/', { params: { path: { id }, header: { 'If-Match': ifMatch } }, body }),
  replace: (id, body) => api.PUT('/api/posts/{id}/', { params: { path: { id } }, body }),
  remove: (id) => api.DELETE('/api/posts/{id}/', { params: { path: { id } } }),
  bad: () => api.GET('/api/posts/', { params: { query: { page_size: 11 } } }),
  problem,
};
const products: Collection<ProductWrite, ProductPatch, Product> = {
  name: 'products',
  valid: (n) => ({ name: `Fetch product ${n}`, price: '10.50' }),
  patch: { stock: 3 },
  create: (body) => api.POST('/api/products/', { body }),
  list: (n) => api.GET('/api/products/', { params: { query: { search: `Fetch product ${n}`, min_price: '10', max_price: '11' } } }),
  get: (id) => api.GET('/api/products/{id}/', { params: { path: { id } } }),
  update: (id, body, ifMatch) => api.PATCH('/api/products/{id}/', { params: { path: { id }, header: { 'If-Match': ifMatch } }, body }),
  replace: (id, body) => api.PUT('/api/products/{id}/', { params: { path: { id } }, body }),
  remove: (id) => api.DELETE('/api/products/{id}/', { params: { path: { id } } }),
  bad: () => api.GET('/api/products/', { params: { query: { page_size: 101 } } }),
  problem,
};
const books: Collection<BookWrite, BookPatch, Book> = {
  name: 'books',
  unique: true,
  valid: (n) => ({ title: `Fetch book ${n}`, author: `Fetch author ${n}`, isbn: `978000001${pad(n)}` }),
  patch: { genre: 'Fantasy' },
  create: (body) => api.POST('/api/books/', { body }),
  list: (n) => api.GET('/api/books/', { params: { query: { search: `Fetch book ${n}`, author: `Fetch author ${n}` } } }),
  get: (id) => api.GET('/api/books/{id}/', { params: { path: { id } } }),
  update: (id, body, ifMatch) => api.PATCH('/api/books/{id}/', { params: { path: { id }, header: { 'If-Match': ifMatch } }, body }),
  replace: (id, body) => api.PUT('/api/books/{id}/', { params: { path: { id } }, body }),
  remove: (id) => api.DELETE('/api/books/{id}/', { params: { path: { id } } }),
  bad: () => api.GET('/api/books/', { params: { query: { page_size: 101 } } }),
  problem,
};
const users: Collection<UserWrite, UserPatch, User> = {
  name: 'users',
  unique: true,
  valid: (n) => ({ username: `fetch_user_${n}`, email: `fetch${n}@example.com` }),
  patch: { first_name: 'Fetch' },
  create: (body) => api.POST('/api/users/', { body }),
  list: (n) => api.GET('/api/users/', { params: { query: { search: `fetch_user_${n}` } } }),
  get: (id) => api.GET('/api/users/{id}/', { params: { path: { id } } }),
  update: (id, body, ifMatch) => api.PATCH('/api/users/{id}/', { params: { path: { id }, header: { 'If-Match': ifMatch } }, body }),
  replace: (id, body) => api.PUT('/api/users/{id}/', { params: { path: { id } }, body }),
  remove: (id) => api.DELETE('/api/users/{id}/', { params: { path: { id } } }),
  bad: () => api.GET('/api/users/', { params: { query: { page_size: 101 } } }),
  problem,
};
const tasks: Collection<TaskWrite, TaskPatch, Task> = {
  name: 'tasks',
  valid: (n) => ({ title: `Fetch task ${n}`, priority: 'high' }),
  patch: { status: 'done' },
  create: (body) => api.POST('/api/tasks/', { body }),
  list: (n) => api.GET('/api/tasks/', { params: { query: { search: `Fetch task ${n}`, priority: ['high'], status: ['todo', 'done'] } } }),
  get: (id) => api.GET('/api/tasks/{id}/', { params: { path: { id } } }),
  update: (id, body, ifMatch) => api.PATCH('/api/tasks/{id}/', { params: { path: { id }, header: { 'If-Match': ifMatch } }, body }),
  replace: (id, body) => api.PUT('/api/tasks/{id}/', { params: { path: { id } }, body }),
  remove: (id) => api.DELETE('/api/tasks/{id}/', { params: { path: { id } } }),
  bad: () => api.GET('/api/tasks/', { params: { query: { page_size: 101 } } }),
  problem,
};

// Every answer carries every field of a record, defaulted ones included: none may be typed as
// possibly undefined.
type Undefinable<T> = T extends unknown ? { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T] : never;
export type EveryRecordFieldIsSent = Assert<[Undefinable<Post | Product | Book | User | Task>] extends [never] ? true : false>;

/**
 * The README's example, compiled under strict with the rest (not run): `createClient<paths>()`
 * with no second type argument; a call's `error` is its problem, typed, with no cast.
 */
export async function readmeExample(): Promise<string> {
  const { data: book, error } = await api.POST('/api/books/', {
    body: { title: 'The Hobbit', author: 'J. R. R. Tolkien', isbn: '9780547928227' },
  });
  if (error) throw new Error(`${error.status} ${error.detail}`);
  const { data: page } = await api.GET('/api/books/', { params: { query: { search: 'tolkien', page_size: 20 } } });
  return `${book.id}: ${page?.count} ${page?.results.map((b) => b.title).join()}`;
}

// Every write type asks exactly the spec's required fields, and types id and the timestamps.
export type WriteTypes = [
  Assert<WriteTypedRight<PostWrite, RequiredOf['PostWrite']>>,
  Assert<WriteTypedRight<ProductWrite, RequiredOf['ProductWrite']>>,
  Assert<WriteTypedRight<BookWrite, RequiredOf['BookWrite']>>,
  Assert<WriteTypedRight<UserWrite, RequiredOf['UserWrite']>>,
  Assert<WriteTypedRight<TaskWrite, RequiredOf['TaskWrite']>>,
];

void main([posts, products, books, users, tasks]).catch((err) => {
  console.error(err);
  process.exit(1);
});

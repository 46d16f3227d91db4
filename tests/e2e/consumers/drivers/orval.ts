// orval's fetch client (`client: 'fetch'`), generated into ./orval/api.ts from the served contract
// with a base URL and nothing else.
import * as api from './orval/api';
import type {
  Book,
  BookPatch,
  BookWrite,
  Post,
  PostPatch,
  PostWrite,
  Problem,
  Product,
  ProductPatch,
  ProductWrite,
  Task,
  TaskPatch,
  TaskWrite,
  User,
  UserPatch,
  UserWrite,
} from './orval/api';
import { type Answer, type Assert, type Collection, main, pad, type WriteTypedRight } from './drive';
import type { RequiredOf } from './expected';

// orval answers `{ data, status, headers }` typed per status. This only compiles while every
// error status that orval types carries the spec's Problem as its body.
type Failure = 400 | 401 | 403 | 404 | 405 | 409 | 412 | 413 | 415 | 422 | 429 | 500 | 503;
type Reply = ({ status: Failure; data: Problem } | { status: 200 | 201 | 204 | 304; data: unknown }) & { headers: Headers };
type Success<R> = R extends { status: 200 | 201; data: infer D } ? D : never;

async function answer<R extends Reply>(call: Promise<R>): Promise<Answer<Success<R>>> {
  const r = await call;
  const response = { status: r.status, headers: r.headers };
  return r.status >= 400 ? { error: r.data, response } : { data: r.data as Success<R>, response };
}
const ifMatch = (tag?: string) => (tag === undefined ? {} : { headers: { 'If-Match': tag } });
const problem = (a: Answer<unknown>) => a.error as Problem | undefined;

const posts: Collection<PostWrite, PostPatch, Post> = {
  name: 'posts',
  valid: (n) => ({ title: `Orval post ${n}`, content: `orval content ${n}`, author: `orval${n}` }),
  patch: { title: 'Patched by orval' },
  create: (body) => answer(api.createPost(body)),
  list: (n) => answer(api.listPosts({ search: `orval content ${n}`, author: `orval${n}`, ordering: ['-id'] })),
  get: (id) => answer(api.getPost(id)),
  update: (id, body, tag) => answer(api.updatePost(id, body, ifMatch(tag))),
  replace: (id, body) => answer(api.replacePost(id, body)),
  remove: (id) => answer(api.deletePost(id)),
  bad: () => answer(api.listPosts({ page_size: 11 })),
  problem,
};
const products: Collection<ProductWrite, ProductPatch, Product> = {
  name: 'products',
  valid: (n) => ({ name: `Orval product ${n}`, price: '10.50' }),
  patch: { stock: 3 },
  create: (body) => answer(api.createProduct(body)),
  list: (n) => answer(api.listProducts({ search: `Orval product ${n}`, min_price: '10', max_price: '11' })),
  get: (id) => answer(api.getProduct(id)),
  update: (id, body, tag) => answer(api.updateProduct(id, body, ifMatch(tag))),
  replace: (id, body) => answer(api.replaceProduct(id, body)),
  remove: (id) => answer(api.deleteProduct(id)),
  bad: () => answer(api.listProducts({ page_size: 101 })),
  problem,
};
const books: Collection<BookWrite, BookPatch, Book> = {
  name: 'books',
  unique: true,
  valid: (n) => ({ title: `Orval book ${n}`, author: `Orval author ${n}`, isbn: `978000002${pad(n)}` }),
  patch: { genre: 'Fantasy' },
  create: (body) => answer(api.createBook(body)),
  list: (n) => answer(api.listBooks({ search: `Orval book ${n}`, author: `Orval author ${n}` })),
  get: (id) => answer(api.getBook(id)),
  update: (id, body, tag) => answer(api.updateBook(id, body, ifMatch(tag))),
  replace: (id, body) => answer(api.replaceBook(id, body)),
  remove: (id) => answer(api.deleteBook(id)),
  bad: () => answer(api.listBooks({ page_size: 101 })),
  problem,
};
const users: Collection<UserWrite, UserPatch, User> = {
  name: 'users',
  unique: true,
  valid: (n) => ({ username: `orval_user_${n}`, email: `orval${n}@example.com` }),
  patch: { first_name: 'Orval' },
  create: (body) => answer(api.createUser(body)),
  list: (n) => answer(api.listUsers({ search: `orval_user_${n}` })),
  get: (id) => answer(api.getUser(id)),
  update: (id, body, tag) => answer(api.updateUser(id, body, ifMatch(tag))),
  replace: (id, body) => answer(api.replaceUser(id, body)),
  remove: (id) => answer(api.deleteUser(id)),
  bad: () => answer(api.listUsers({ page_size: 101 })),
  problem,
};
const tasks: Collection<TaskWrite, TaskPatch, Task> = {
  name: 'tasks',
  valid: (n) => ({ title: `Orval task ${n}`, priority: 'high' }),
  patch: { status: 'done' },
  create: (body) => answer(api.createTask(body)),
  list: (n) => answer(api.listTasks({ search: `Orval task ${n}`, priority: ['high'], status: ['todo', 'done'] })),
  get: (id) => answer(api.getTask(id)),
  update: (id, body, tag) => answer(api.updateTask(id, body, ifMatch(tag))),
  replace: (id, body) => answer(api.replaceTask(id, body)),
  remove: (id) => answer(api.deleteTask(id)),
  bad: () => answer(api.listTasks({ page_size: 101 })),
  problem,
};

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

// @hey-api/openapi-ts with its default options, generated into ./hey from the served contract.
import { client } from './hey/client.gen';
import * as sdk from './hey/sdk.gen';
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
} from './hey/types.gen';
import { type Answer, type Assert, type Collection, main, pad, type WriteTypedRight } from './drive';
import type { RequiredOf } from './expected';

client.setConfig({ baseUrl: process.argv[2] });
const problem = (a: Answer<unknown>) => a.error as Problem | undefined;

const posts: Collection<PostWrite, PostPatch, Post> = {
  name: 'posts',
  valid: (n) => ({ title: `Hey post ${n}`, content: `heyapi content ${n}`, author: `hey${n}` }),
  patch: { title: 'Patched by hey-api' },
  create: (body) => sdk.createPost({ body }),
  list: (n) => sdk.listPosts({ query: { search: `heyapi content ${n}`, author: `hey${n}`, ordering: ['-id'] } }),
  get: (id) => sdk.getPost({ path: { id } }),
  update: (id, body, ifMatch) => sdk.updatePost({ path: { id }, body, headers: { 'If-Match': ifMatch } }),
  replace: (id, body) => sdk.replacePost({ path: { id }, body }),
  remove: (id) => sdk.deletePost({ path: { id } }),
  bad: () => sdk.listPosts({ query: { page_size: 11 } }),
  problem,
};
const products: Collection<ProductWrite, ProductPatch, Product> = {
  name: 'products',
  valid: (n) => ({ name: `Hey product ${n}`, price: '10.50' }),
  patch: { stock: 3 },
  create: (body) => sdk.createProduct({ body }),
  list: (n) => sdk.listProducts({ query: { search: `Hey product ${n}`, min_price: '10', max_price: '11' } }),
  get: (id) => sdk.getProduct({ path: { id } }),
  update: (id, body, ifMatch) => sdk.updateProduct({ path: { id }, body, headers: { 'If-Match': ifMatch } }),
  replace: (id, body) => sdk.replaceProduct({ path: { id }, body }),
  remove: (id) => sdk.deleteProduct({ path: { id } }),
  bad: () => sdk.listProducts({ query: { page_size: 101 } }),
  problem,
};
const books: Collection<BookWrite, BookPatch, Book> = {
  name: 'books',
  unique: true,
  valid: (n) => ({ title: `Hey book ${n}`, author: `Hey author ${n}`, isbn: `978000000${pad(n)}` }),
  patch: { genre: 'Fantasy' },
  create: (body) => sdk.createBook({ body }),
  list: (n) => sdk.listBooks({ query: { search: `Hey book ${n}`, author: `Hey author ${n}` } }),
  get: (id) => sdk.getBook({ path: { id } }),
  update: (id, body, ifMatch) => sdk.updateBook({ path: { id }, body, headers: { 'If-Match': ifMatch } }),
  replace: (id, body) => sdk.replaceBook({ path: { id }, body }),
  remove: (id) => sdk.deleteBook({ path: { id } }),
  bad: () => sdk.listBooks({ query: { page_size: 101 } }),
  problem,
};
const users: Collection<UserWrite, UserPatch, User> = {
  name: 'users',
  unique: true,
  valid: (n) => ({ username: `hey_user_${n}`, email: `hey${n}@example.com` }),
  patch: { first_name: 'Hey' },
  create: (body) => sdk.createUser({ body }),
  list: (n) => sdk.listUsers({ query: { search: `hey_user_${n}` } }),
  get: (id) => sdk.getUser({ path: { id } }),
  update: (id, body, ifMatch) => sdk.updateUser({ path: { id }, body, headers: { 'If-Match': ifMatch } }),
  replace: (id, body) => sdk.replaceUser({ path: { id }, body }),
  remove: (id) => sdk.deleteUser({ path: { id } }),
  bad: () => sdk.listUsers({ query: { page_size: 101 } }),
  problem,
};
const tasks: Collection<TaskWrite, TaskPatch, Task> = {
  name: 'tasks',
  valid: (n) => ({ title: `Hey task ${n}`, priority: 'high' }),
  patch: { status: 'done' },
  create: (body) => sdk.createTask({ body }),
  list: (n) => sdk.listTasks({ query: { search: `Hey task ${n}`, priority: ['high'], status: ['todo', 'done'] } }),
  get: (id) => sdk.getTask({ path: { id } }),
  update: (id, body, ifMatch) => sdk.updateTask({ path: { id }, body, headers: { 'If-Match': ifMatch } }),
  replace: (id, body) => sdk.replaceTask({ path: { id }, body }),
  remove: (id) => sdk.deleteTask({ path: { id } }),
  bad: () => sdk.listTasks({ query: { page_size: 101 } }),
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

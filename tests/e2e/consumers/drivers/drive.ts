// Shared by the SDK drivers (compiled with them, outside the project's tsconfig): the scenario,
// run on every collection declared in `scenarios` through whatever a generator made, checking
// every answer. A driver says only how its generator calls one collection's operations.
import type { components, operations } from './openapi-typescript';
import type { RequiredOf } from './expected';

export interface Answer<T> {
  data?: T;
  error?: unknown;
  /** A fetch Response, or what a generator keeps of it. */
  response?: { status: number; headers: Headers };
}

const status = (a: Answer<unknown>) => a.response?.status;

export type Problem = { type: string; title: string; status: number; detail?: string; errors?: { field: string; message: string }[] };

// The scenario's data, typed by the contract itself (openapi-typescript's types of the served
// document); each driver checks that its generator's types take the same (TypedRight).
type S = components['schemas'];
type Resource = { [K in keyof S & string]: `${K}Write` extends keyof S ? K : never }[keyof S & string];
type Plural = keyof operations extends infer K ? (K extends `list${infer P}` ? P : never) : never;
type ListQuery<P extends Plural> = NonNullable<operations[`list${P}`]['parameters']['query']>;

interface Scenario<R extends Resource, P extends Plural> {
  /** The schema and list operation names: `Post` (createPost, PostWrite), `Posts` (listPosts). */
  resource: R;
  plural: P;
  /** Present when the collection has a unique field: creating valid(n) twice is a 409. */
  unique?: boolean;
  /** A body whose text and unique fields are the driver's own (`tag`) and the run's (`n`). */
  valid(n: number, tag: string): S[`${R}Write`];
  patch: S[`${R}Patch`];
  /** A search for valid(n)'s text, with a filter that valid(n) passes. */
  query(n: number, tag: string): ListQuery<P>;
}
const scenario = <R extends Resource, P extends Plural>(s: Scenario<R, P>) => s;

export const scenarios = {
  posts: scenario({
    resource: 'Post',
    plural: 'Posts',
    valid: (n, tag) => ({ title: `${tag} post ${n}`, content: `${tag} content ${n}`, author: `${tag}${n}` }),
    patch: { title: 'Patched' },
    query: (n, tag) => ({ search: `${tag} content ${n}`, author: `${tag}${n}`, ordering: ['-id'] }),
  }),
  products: scenario({
    resource: 'Product',
    plural: 'Products',
    valid: (n, tag) => ({ name: `${tag} product ${n}`, price: '10.50' }),
    patch: { stock: 3 },
    query: (n, tag) => ({ search: `${tag} product ${n}`, min_price: '10', max_price: '11' }),
  }),
  books: scenario({
    resource: 'Book',
    plural: 'Books',
    unique: true,
    valid: (n, tag) => ({ title: `${tag} book ${n}`, author: `${tag} author ${n}`, isbn: `978000000${String(n).padStart(4, '0')}` }),
    patch: { genre: 'Fantasy' },
    query: (n, tag) => ({ search: `${tag} book ${n}`, author: `${tag} author ${n}` }),
  }),
  users: scenario({
    resource: 'User',
    plural: 'Users',
    unique: true,
    valid: (n, tag) => ({ username: `${tag}_user_${n}`, email: `${tag}${n}@example.com` }),
    patch: { first_name: 'Patched' },
    query: (n, tag) => ({ search: `${tag}_user_${n}` }),
  }),
  tasks: scenario({
    resource: 'Task',
    plural: 'Tasks',
    valid: (n, tag) => ({ title: `${tag} task ${n}`, priority: 'high' }),
    patch: { status: 'done' },
    query: (n, tag) => ({ search: `${tag} task ${n}`, priority: ['high'], status: ['todo', 'done'] }),
  }),
};
type Scenarios = typeof scenarios;
export type Name = keyof Scenarios;
export type ResourceOf<N extends Name> = Scenarios[N]['resource'];
export type PluralOf<N extends Name> = Scenarios[N]['plural'];
/** A scenario of any collection, as a driver's operations receive it. */
export type AnyScenario = Scenarios[Name];

type Row = { id: number } & Record<string, unknown>;
/** One collection's operations as a generator makes them, each answer read as an Answer. */
export interface Operations {
  create(body: object): Promise<Answer<Row>>;
  list(query: object): Promise<Answer<{ count: number | null; results: Row[] }>>;
  get(id: number): Promise<Answer<Row>>;
  update(id: number, body: object, ifMatch: string): Promise<Answer<Row>>;
  replace(id: number, body: object): Promise<Answer<Row>>;
  remove(id: number): Promise<Answer<unknown>>;
}

/** A generator's client, as its driver hands it to main. */
export interface Driver {
  /** Names the driver's data (lower-case letters): its text, usernames and e-mail addresses. */
  tag: string;
  /** A collection's operations, by its name (its paths) or its scenario's resource and plural. */
  operations(name: Name, s: AnyScenario): Operations;
  /** The typed error body of an answer, as the generator types it. */
  problem(a: Answer<unknown>): Problem | undefined;
}

type OperationId = `${'create' | 'get' | 'update' | 'replace' | 'delete'}${AnyScenario['resource']}` | `list${AnyScenario['plural']}`;
/**
 * The operations of a client whose functions are named by operationId and take positional
 * arguments: the id, the body, then request options (`{ headers }`). `call` calls one and reads
 * its answer; its parameter's type makes the driver compile only while every operationId exists.
 */
export function positional(
  { resource, plural }: AnyScenario,
  call: (id: OperationId, ...args: unknown[]) => Promise<Answer<never>>,
): Operations {
  return {
    create: (body) => call(`create${resource}`, body),
    list: (query) => call(`list${plural}`, query),
    get: (id) => call(`get${resource}`, id),
    update: (id, body, ifMatch) => call(`update${resource}`, id, body, { headers: { 'If-Match': ifMatch } }),
    replace: (id, body) => call(`replace${resource}`, id, body),
    remove: (id) => call(`delete${resource}`, id),
  };
}

/** Above every collection's page size maximum (100 at most): the contract refuses it. */
const TOO_LARGE_PAGE = { page_size: 101 };

function must(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

export async function drive(name: Name, d: Driver, run: number): Promise<string[]> {
  const s: AnyScenario = scenarios[name];
  const c = d.operations(name, s);
  const done: string[] = [];
  const n = run * 100;
  const created = await c.create(s.valid(n, d.tag));
  must(status(created) === 201 && created.data !== undefined, `${name}: create ${status(created)}`);
  const id = created.data!.id;
  done.push('create');

  const listed = await c.list(s.query(n, d.tag));
  must(status(listed) === 200 && listed.data!.results.some((r) => r.id === id), `${name}: list with search and filter`);
  done.push('list');

  const got = await c.get(id);
  must(status(got) === 200 && got.data!.id === id, `${name}: get`);
  const tag = got.response!.headers.get('etag')!;
  done.push('get');

  const patched = await c.update(id, s.patch, tag);
  must(status(patched) === 200, `${name}: patch ${status(patched)}`);
  done.push('patch');

  const stale = await c.update(id, s.patch, tag);
  must(status(stale) === 412 && d.problem(stale)?.type === '/problems/stale-etag', `${name}: stale If-Match ${status(stale)}`);
  done.push('412');

  const replaced = await c.replace(id, s.valid(n + 1, d.tag));
  must(status(replaced) === 200 && replaced.data!.id === id, `${name}: put ${status(replaced)}`);
  done.push('put');

  // A record fetched, changed and sent back whole: its id and timestamps are ignored.
  const fetched = await c.get(id);
  const back = await c.replace(id, { ...fetched.data!, ...s.patch });
  const changed = Object.entries(s.patch).every(([k, v]) => back.data?.[k] === v);
  must(status(back) === 200 && back.data!.id === id && changed, `${name}: put back ${status(back)}`);
  done.push('put back');

  const bad = await c.list(TOO_LARGE_PAGE);
  must(
    status(bad) === 400 && d.problem(bad)?.type === '/problems/validation' && d.problem(bad)?.errors?.[0]?.field === 'page_size',
    `${name}: 400 ${JSON.stringify(d.problem(bad))}`,
  );
  done.push('400');

  if (s.unique) {
    const taken = await c.create(s.valid(n + 1, d.tag));
    must(
      status(taken) === 409 && d.problem(taken)?.type === '/problems/unique' && Boolean(d.problem(taken)?.errors?.length),
      `${name}: 409 ${status(taken)}`,
    );
    done.push('409');
  }

  const removed = await c.remove(id);
  must(status(removed) === 204, `${name}: delete ${status(removed)}`);
  done.push('delete');

  const gone = await c.get(id);
  must(status(gone) === 404 && d.problem(gone)?.type === '/problems/not-found', `${name}: 404 ${status(gone)}`);
  done.push('404');
  return done;
}

/** Drives every collection in `scenarios`; prints what each got through, for the test to compare. */
export function main(d: Driver): void {
  const run = async () => {
    const out: Record<string, string[]> = {};
    for (const name of Object.keys(scenarios) as Name[]) out[name] = await drive(name, d, Number(process.argv[3] ?? 1));
    console.log(JSON.stringify(out));
  };
  run().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

// Compile-time checks each driver applies to its generator's types.
export type Assert<T extends true> = T;
/** Compiles only when T is never: a union of failures, each named, or none. */
export type None<T extends never> = T;
/** The keys a value of T must have. */
export type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/**
 * A write type asks exactly the spec's required fields (none with a default), and types the
 * server-set fields as the record does (a number and strings, never unknown).
 */
export type WriteTypedRight<W, Required> =
  Same<RequiredKeys<W>, Required> extends true
    ? W extends { id?: infer I; created_at?: infer C; updated_at?: infer U }
      ? Same<[NonNullable<I>, NonNullable<C>, NonNullable<U>], [number, string, string]>
      : false
    : false;

/** What a generator types for one collection. */
export interface Typing {
  write: unknown;
  patch: unknown;
  record: unknown;
  query: unknown;
}
type Fails<Ok extends boolean, What extends string> = Ok extends true ? never : What;
/**
 * The collections, each with the checks its generator's types fail (none: never): they take the
 * scenario's body, patch and list query; a record fetched is a body they take (sent back whole,
 * so its id is a number); and the write type is typed right (WriteTypedRight).
 */
export type TypedRight<T extends Record<Name, Typing>> = {
  [N in Name]:
    | Fails<ReturnType<Scenarios[N]['valid']> extends T[N]['write'] ? true : false, `${N}: body`>
    | Fails<Scenarios[N]['patch'] extends T[N]['patch'] ? true : false, `${N}: patch`>
    | Fails<ReturnType<Scenarios[N]['query']> extends T[N]['query'] ? true : false, `${N}: list query`>
    | Fails<T[N]['record'] extends T[N]['write'] & { id: number } ? true : false, `${N}: record sent back`>
    | Fails<WriteTypedRight<T[N]['write'], RequiredOf[`${ResourceOf<N>}Write`]>, `${N}: write type`>;
}[Name];

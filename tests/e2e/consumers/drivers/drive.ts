// Shared by the SDK drivers (compiled with them, outside the project's tsconfig): runs the same
// scenario on one collection through whatever a generator made, and checks every answer.
export interface Answer<T> {
  data?: T;
  error?: unknown;
  /** A fetch Response, or what a generator keeps of it. */
  response?: { status: number; headers: Headers };
}

const status = (a: Answer<unknown>) => a.response?.status;

/** `n` as the 4 digits that end a driver's ISBNs (each driver has a prefix of its own). */
export const pad = (n: number) => String(n).padStart(4, '0');

export type Problem = { type: string; title: string; status: number; detail?: string; errors?: { field: string; message: string }[] };

/** R extends W: a record fetched is a body the generated write type takes (its id and timestamps too). */
export interface Collection<W, P, R extends W & { id: number }> {
  name: string;
  valid(n: number): W;
  patch: P;
  /** Present when the collection has a unique field: creating valid(n) twice is a 409. */
  unique?: boolean;
  create(body: W): Promise<Answer<R>>;
  /** A search for valid(n)'s text, with a filter that valid(n) passes. */
  list(n: number): Promise<Answer<{ count: number | null; results: R[] }>>;
  get(id: number): Promise<Answer<R>>;
  update(id: number, body: P, ifMatch?: string): Promise<Answer<R>>;
  replace(id: number, body: W): Promise<Answer<R>>;
  remove(id: number): Promise<Answer<unknown>>;
  /** A request the contract refuses (page_size above the maximum). */
  bad(): Promise<Answer<unknown>>;
  /** The typed error body of an answer, as the generator types it. */
  problem(a: Answer<unknown>): Problem | undefined;
}

function must(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

export async function drive<W, P, R extends W & { id: number }>(c: Collection<W, P, R>, run: number): Promise<string[]> {
  const done: string[] = [];
  const n = run * 100;
  const created = await c.create(c.valid(n));
  must(status(created) === 201 && created.data !== undefined, `${c.name}: create ${status(created)}`);
  const id = created.data!.id;
  done.push('create');

  const listed = await c.list(n);
  must(status(listed) === 200 && listed.data!.results.some((r) => r.id === id), `${c.name}: list with search and filter`);
  done.push('list');

  const got = await c.get(id);
  must(status(got) === 200 && got.data!.id === id, `${c.name}: get`);
  const tag = got.response!.headers.get('etag')!;
  done.push('get');

  const patched = await c.update(id, c.patch, tag);
  must(status(patched) === 200, `${c.name}: patch ${status(patched)}`);
  done.push('patch');

  const stale = await c.update(id, c.patch, tag);
  must(status(stale) === 412 && c.problem(stale)?.status === 412, `${c.name}: stale If-Match ${status(stale)}`);
  done.push('412');

  const replaced = await c.replace(id, c.valid(n + 1));
  must(status(replaced) === 200 && replaced.data!.id === id, `${c.name}: put ${status(replaced)}`);
  done.push('put');

  // A record fetched, changed and sent back whole: its id and timestamps are ignored.
  const fetched = await c.get(id);
  const back = await c.replace(id, { ...fetched.data!, ...c.patch });
  const changed = Object.entries(c.patch as object).every(([k, v]) => (back.data as Record<string, unknown>)?.[k] === v);
  must(status(back) === 200 && back.data!.id === id && changed, `${c.name}: put back ${status(back)}`);
  done.push('put back');

  const bad = await c.bad();
  must(status(bad) === 400 && c.problem(bad)?.errors?.[0]?.field === 'page_size', `${c.name}: 400 ${JSON.stringify(c.problem(bad))}`);
  done.push('400');

  if (c.unique) {
    const taken = await c.create(c.valid(n + 1));
    must(
      status(taken) === 409 && c.problem(taken)?.status === 409 && Boolean(c.problem(taken)?.errors?.length),
      `${c.name}: 409 ${status(taken)}`,
    );
    done.push('409');
  }

  const removed = await c.remove(id);
  must(status(removed) === 204, `${c.name}: delete ${status(removed)}`);
  done.push('delete');

  const gone = await c.get(id);
  must(status(gone) === 404 && c.problem(gone)?.title === 'Not Found', `${c.name}: 404 ${status(gone)}`);
  done.push('404');
  return done;
}

export async function main(collections: Collection<any, any, any>[]): Promise<void> {
  const out: Record<string, string[]> = {};
  for (const c of collections) out[c.name] = await drive(c, Number(process.argv[3] ?? 1));
  console.log(JSON.stringify(out));
}

// Compile-time checks each driver applies to its generator's types.
export type Assert<T extends true> = T;
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

// orval's fetch client (`client: 'fetch'`), generated into ./orval/api.ts from the served contract
// with a base URL and nothing else.
import * as api from './orval/api';
import type { Problem } from './orval/api';
import { type Answer, main, type Name, type None, type PluralOf, positional, type ResourceOf, type TypedRight } from './drive';

// orval answers `{ data, status, headers }` typed per status. This only compiles while every
// error status that orval types carries the spec's Problem as its body.
type Failure = 400 | 401 | 403 | 404 | 405 | 409 | 412 | 413 | 415 | 422 | 429 | 500 | 503;
type Reply = ({ status: Failure; data: Problem } | { status: 200 | 201 | 204 | 304; data: unknown }) & { headers: Headers };
type Success<R> = R extends { status: 200 | 201; data: infer D } ? D : never;

async function answer(call: Promise<Reply>): Promise<Answer<never>> {
  const r = await call;
  const response = { status: r.status, headers: r.headers };
  return r.status >= 400 ? { error: r.data, response } : { data: r.data as never, response };
}

// The client's functions by operationId, called through one signature (TypedRight checks their types).
type Api = typeof api;
type Fn = { [K in keyof Api]: Api[K] extends (...args: never[]) => Promise<Reply> ? K : never }[keyof Api];
export type Typed = None<
  TypedRight<{
    [N in Name]: {
      write: Parameters<Api[`create${ResourceOf<N>}`]>[0];
      patch: Parameters<Api[`update${ResourceOf<N>}`]>[1];
      record: Success<Awaited<ReturnType<Api[`get${ResourceOf<N>}`]>>>;
      query: NonNullable<Parameters<Api[`list${PluralOf<N>}`]>[0]>;
    };
  }>
>;

main({
  tag: 'orval',
  operations: (_name, s) =>
    positional(s, (id: Fn, ...args) => answer((api[id] as unknown as (...a: unknown[]) => Promise<Reply>)(...args))),
  problem: (a) => a.error as Problem | undefined,
});

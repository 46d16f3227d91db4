// openapi-typescript (types in ./openapi-typescript.ts from the served contract, its default
// options) and openapi-fetch, with no option but the base URL.
import createClient from 'openapi-fetch';
import type { components, paths } from './openapi-typescript';
import { type Answer, type Assert, main, type Name, type None, type ResourceOf, type TypedRight } from './drive';

type S = components['schemas'];
const api = createClient<paths>({ baseUrl: process.argv[2] });

// openapi-fetch types a call by its path, and cannot type a body for a union of paths: the calls
// go through one untyped signature, and TypedRight checks what the paths take and answer.
type Call = (path: string, init: object) => Promise<Answer<never>>;
const call = api as unknown as Record<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', Call>;
type Json<B> = B extends { content: { 'application/json': infer J } } ? J : never;
type List<N extends Name> = paths[`/api/${N}/`];
type One<N extends Name> = paths[`/api/${N}/{id}/`];
export type Typed = None<
  TypedRight<{
    [N in Name]: {
      write: Json<List<N>['post']['requestBody']>;
      patch: Json<One<N>['patch']['requestBody']>;
      record: Json<One<N>['get']['responses'][200]>;
      query: NonNullable<List<N>['get']['parameters']['query']>;
    };
  }>
>;

main({
  tag: 'fetch',
  operations(name) {
    const list = `/api/${name}/` as const satisfies keyof paths;
    const one = `/api/${name}/{id}/` as const satisfies keyof paths;
    return {
      create: (body) => call.POST(list, { body }),
      list: (query) => call.GET(list, { params: { query } }),
      get: (id) => call.GET(one, { params: { path: { id } } }),
      update: (id, body, ifMatch) => call.PATCH(one, { params: { path: { id }, header: { 'If-Match': ifMatch } }, body }),
      replace: (id, body) => call.PUT(one, { params: { path: { id } }, body }),
      remove: (id) => call.DELETE(one, { params: { path: { id } } }),
    };
  },
  problem: (a) => a.error as S['Problem'] | undefined,
});

// Every answer carries every field of a record, defaulted ones included: none may be typed as
// possibly undefined.
type Undefinable<T> = T extends unknown ? { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T] : never;
export type EveryRecordFieldIsSent = Assert<[Undefinable<S[ResourceOf<Name>]>] extends [never] ? true : false>;

/**
 * The README's example, compiled under strict with the rest (not run): `createClient<paths>()`
 * with no second type argument; a call's `error` is its problem, typed, with no cast.
 */
export async function readmeExample(): Promise<string> {
  const { data: book, error } = await api.POST('/api/books/', {
    body: { title: 'The Hobbit', author: 'J. R. R. Tolkien', isbn: '9780547928227' },
  });
  if (error) throw new Error(`${error.status} ${error.detail}`);
  // A 204 has no body: with Prefer: return=minimal, or a token that may not read books.
  if (!book) throw new Error('the create answered no body');
  const { data: page } = await api.GET('/api/books/', { params: { query: { search: 'tolkien', page_size: 20 } } });
  return `${book.id}: ${page?.count} ${page?.results.map((b) => b.title).join()}`;
}

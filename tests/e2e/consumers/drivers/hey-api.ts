// @hey-api/openapi-ts with its default options, generated into ./hey from the served contract.
import { client } from './hey/client.gen';
import * as sdk from './hey/sdk.gen';
import type { Problem } from './hey/types.gen';
import { type Answer, main, type Name, type None, type PluralOf, type ResourceOf, type TypedRight } from './drive';

client.setConfig({ baseUrl: process.argv[2] });

// The SDK's functions by operationId: one signature for all (TypedRight checks their types).
type Sdk = typeof sdk;
const call = (id: keyof Sdk) => sdk[id] as unknown as (options: object) => Promise<Answer<never>>;
type Options<K extends keyof Sdk> = NonNullable<Parameters<Sdk[K]>[0]>;
type Body<K extends keyof Sdk> = Options<K> extends { body: infer B } ? B : never;
type Data<K extends keyof Sdk> = NonNullable<Awaited<ReturnType<Sdk[K]>>['data']>;
export type Typed = None<
  TypedRight<{
    [N in Name]: {
      write: Body<`create${ResourceOf<N>}`>;
      patch: Body<`update${ResourceOf<N>}`>;
      record: Data<`get${ResourceOf<N>}`>;
      query: NonNullable<Options<`list${PluralOf<N>}`>['query']>;
    };
  }>
>;

main({
  tag: 'hey',
  operations: (_name, { resource, plural }) => ({
    create: (body) => call(`create${resource}`)({ body }),
    list: (query) => call(`list${plural}`)({ query }),
    get: (id) => call(`get${resource}`)({ path: { id } }),
    update: (id, body, ifMatch) => call(`update${resource}`)({ path: { id }, body, headers: { 'If-Match': ifMatch } }),
    replace: (id, body) => call(`replace${resource}`)({ path: { id }, body }),
    remove: (id) => call(`delete${resource}`)({ path: { id } }),
  }),
  problem: (a) => a.error as Problem | undefined,
});

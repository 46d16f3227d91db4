// swagger-typescript-api with its default options (`generate -p openapi.json -o sta`), generated
// into ./sta/Api.ts from the served contract; its client is given the base URL and nothing else.
import { Api, type HttpResponse, type Problem } from './sta/Api';
import { type Answer, main, type Name, type None, type PluralOf, positional, type ResourceOf, type TypedRight } from './drive';

const client = new Api({ baseUrl: process.argv[2] });

// By default its client throws the answer (the same HttpResponse, `error` parsed) unless it is ok.
async function answer(call: Promise<HttpResponse<never, Problem>>): Promise<Answer<never>> {
  try {
    const r = await call;
    return { data: r.data, response: r };
  } catch (failed) {
    if (!(failed instanceof Response)) throw failed;
    return { error: (failed as HttpResponse<never, Problem>).error, response: failed };
  }
}

// The client's methods by operationId, called through one signature (TypedRight checks their types).
type Methods = Api<unknown>['api'];
// Its default types an enumerated field as a TypeScript enum; its values are the contract's strings.
type Value<V> = V extends string ? `${V}` : V extends (infer E)[] ? Value<E>[] : V;
type Unenum<T> = { [K in keyof T]: Value<T[K]> };
export type Typed = None<
  TypedRight<{
    [N in Name]: {
      write: Unenum<Parameters<Methods[`create${ResourceOf<N>}`]>[0]>;
      patch: Unenum<Parameters<Methods[`update${ResourceOf<N>}`]>[1]>;
      record: Awaited<ReturnType<Methods[`get${ResourceOf<N>}`]>>['data'];
      query: Unenum<NonNullable<Parameters<Methods[`list${PluralOf<N>}`]>[0]>>;
    };
  }>
>;

main({
  tag: 'sta',
  operations: (_name, s) =>
    positional(s, (id: keyof Methods, ...args) =>
      answer((client.api[id] as unknown as (...a: unknown[]) => Promise<HttpResponse<never, Problem>>)(...args)),
    ),
  problem: (a) => a.error as Problem | undefined,
});

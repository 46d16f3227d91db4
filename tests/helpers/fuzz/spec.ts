import type { OpenAPIV3 } from 'openapi-types';
import { loadSpec, pointer } from '../../../src/spec';

/**
 * The operations of openapi/openapi.yaml with every $ref resolved, for the fuzzer: it derives
 * what it sends from these, so an operation or a field added to the spec is fuzzed unasked.
 */
export type Schema = OpenAPIV3.SchemaObject;

export interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  schema: Schema;
  /** How an array is written in a query: `explode: false` joins the items with commas. */
  style?: string;
  explode?: boolean;
  allowEmptyValue?: boolean;
}

export interface Operation {
  id: string;
  method: string;
  /** The path template, e.g. `/api/books/{id}/`. */
  path: string;
  params: Param[];
  /** The JSON request body's schema, when the operation takes one. */
  body?: Schema;
  /** The collection for `/api/<collection>/...` paths. */
  collection?: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** The node with every `$ref` replaced by what it points at (the spec has no cycles). */
export function deref<T>(node: T, root: unknown): T {
  if (Array.isArray(node)) return node.map((n) => deref(n, root)) as T;
  if (!node || typeof node !== 'object') return node;
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') return deref(pointer(root, ref), root) as T;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, deref(v, root)])) as T;
}

export function specOperations(spec: OpenAPIV3.Document = loadSpec()): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    const shared = deref(item?.parameters ?? [], spec) as OpenAPIV3.ParameterObject[];
    for (const method of METHODS) {
      const op = item?.[method];
      if (!op?.operationId) continue;
      const own = deref(op.parameters ?? [], spec) as OpenAPIV3.ParameterObject[];
      const body = deref(op.requestBody, spec) as OpenAPIV3.RequestBodyObject | undefined;
      out.push({
        id: op.operationId,
        method: method.toUpperCase(),
        path,
        params: [...shared, ...own].map((p) => ({
          name: p.name,
          in: p.in as Param['in'],
          schema: p.schema as Schema,
          style: p.style,
          explode: p.explode,
          allowEmptyValue: p.allowEmptyValue,
        })),
        body: body?.content['application/json']?.schema as Schema | undefined,
        collection: /^\/api\/([^/{}]+)\//.exec(path)?.[1],
      });
    }
  }
  return out;
}

import type { Operation } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { isSetByService } from '../spec';

const cache = new WeakMap<Operation, ReadonlySet<string>>();

function jsonSchema(content: Record<string, OpenAPIV3.MediaTypeObject> | undefined): OpenAPIV3.SchemaObject | undefined {
  return content?.['application/json']?.schema as OpenAPIV3.SchemaObject | undefined;
}

/**
 * The fields the service sets: the properties of the operation's body schema that are
 * marked `x-set-by-service` (`id`, `created_at`, `updated_at`). A body may carry them, typed as in
 * a record; they never reach a handler.
 */
export function serviceSetFields(operation: Operation): ReadonlySet<string> {
  let fields = cache.get(operation);
  if (fields) return fields;
  const body = jsonSchema((operation.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content);
  const props = Object.entries(body?.properties ?? {}) as [string, OpenAPIV3.SchemaObject][];
  fields = new Set(props.filter(([, p]) => isSetByService(p)).map(([name]) => name));
  cache.set(operation, fields);
  return fields;
}

/**
 * The body without the service-set fields (the contract ignores their values), after validation
 * and before the handler. Anything but a JSON object is returned as it is.
 */
export function withoutServiceSetFields(operation: Operation | undefined, body: unknown): unknown {
  if (!operation || !body || typeof body !== 'object' || Array.isArray(body)) return body;
  const fields = serviceSetFields(operation);
  if (!fields.size || !Object.keys(body).some((k) => fields.has(k))) return body;
  return Object.fromEntries(Object.entries(body).filter(([k]) => !fields.has(k)));
}

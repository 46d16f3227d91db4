import type { Operation } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';

const cache = new WeakMap<Operation, ReadonlySet<string>>();

function jsonSchema(content: Record<string, OpenAPIV3.MediaTypeObject> | undefined): OpenAPIV3.SchemaObject | undefined {
  return content?.['application/json']?.schema as OpenAPIV3.SchemaObject | undefined;
}

/**
 * The fields the service sets: properties of the operation's success response that its request
 * body schema lacks (`id`, `created_at`, `updated_at` for every record). Derived from the spec,
 * which lists only what a client sends in the write schemas.
 */
export function serviceSetFields(operation: Operation): ReadonlySet<string> {
  let fields = cache.get(operation);
  if (fields) return fields;
  const body = jsonSchema((operation.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content);
  const success = Object.entries(operation.responses ?? {}).find(([status]) => /^2/.test(status))?.[1] as
    OpenAPIV3.ResponseObject | undefined;
  const record = jsonSchema(success?.content);
  const sent = new Set(Object.keys(body?.properties ?? {}));
  fields = new Set(body && record ? Object.keys(record.properties ?? {}).filter((name) => !sent.has(name)) : []);
  cache.set(operation, fields);
  return fields;
}

/**
 * The body without the service-set fields, so that a record fetched, changed and sent back is
 * accepted (the contract ignores those values) while any other unknown property still fails
 * validation. Anything but a JSON object is returned as it is, for the validator to judge.
 */
export function withoutServiceSetFields(operation: Operation | undefined, body: unknown): unknown {
  if (!operation || !body || typeof body !== 'object' || Array.isArray(body)) return body;
  const fields = serviceSetFields(operation);
  if (!fields.size || !Object.keys(body).some((k) => fields.has(k))) return body;
  return Object.fromEntries(Object.entries(body).filter(([k]) => !fields.has(k)));
}

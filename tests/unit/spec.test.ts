import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenAPIV3 } from 'openapi-types';
import { collections } from '../../src/collections';
import { clientProperties, isSetByService, loadSpec } from '../../src/spec';
import { deref } from '../helpers/fuzz/spec';

// Every schema of the contract carries an example (the reference page and generated clients show
// them), and every example, of a schema, a property or a parameter, is one the schema admits.
const spec = loadSpec();
const ajv = addFormats(new Ajv({ strict: false, allErrors: true }), { mode: 'full' });

type Row = [string, { given: unknown; schema: OpenAPIV3.SchemaObject }];

/** Every `example` beside a schema, found by walking the document, named by where it is. */
function examples(node: unknown, where: string, out: Row[] = []): Row[] {
  if (!node || typeof node !== 'object') return out;
  const n = node as Record<string, any>;
  if ('example' in n && ('type' in n || 'properties' in n || 'allOf' in n || '$ref' in n))
    out.push([where, { given: n.example, schema: deref(n, spec) }]);
  if ('example' in n && 'schema' in n) out.push([where, { given: n.example, schema: deref(n.schema, spec) }]);
  for (const [k, v] of Object.entries(n)) if (k !== 'example' && k !== 'examples') examples(v, `${where}/${k}`, out);
  return out;
}

const schemas = Object.entries(spec.components?.schemas ?? {});

test.each(schemas.map(([name, schema]) => [name, { given: schema as OpenAPIV3.SchemaObject }] as const))(
  'schema %s has an example',
  (_name, { given }) => {
    expect(given).toHaveProperty('example');
  },
);

test.each(examples(spec, '#'))('the example at %s is valid', (_where, { given, schema }) => {
  const validate = ajv.compile(schema);
  expect(validate(given) ? [] : validate.errors).toEqual([]);
});

// A record fetched, changed and sent back is a valid body: the write schemas list the fields the
// record has and a client does not set, marked `x-set-by-service` (typed as in the record, their
// values ignored), and no others.
test.each(collections.map((c) => [c.resource, c] as const).flatMap(([r, c]) => [[`${r}Write`, c] as const, [`${r}Patch`, c] as const]))(
  '%s takes back the fields the service sets, and only those',
  (name, c) => {
    const body = deref(spec.components!.schemas![name], spec) as OpenAPIV3.SchemaObject;
    const record = spec.components!.schemas![c.resource] as OpenAPIV3.SchemaObject;
    const props = body.properties as Record<string, OpenAPIV3.SchemaObject>;
    const setByService = Object.keys(props).filter((p) => isSetByService(props[p]));
    const client = Object.keys(clientProperties(spec, c.resource));
    expect(setByService.sort()).toEqual(
      Object.keys(record.properties!)
        .filter((p) => !client.includes(p))
        .sort(),
    );
    expect(setByService.sort()).toEqual(['created_at', 'id', 'updated_at']);
    for (const p of setByService) expect([p, props[p].type]).toEqual([p, p === 'id' ? 'integer' : 'string']);
    expect(Object.keys(props).filter((p) => !isSetByService(props[p]))).toEqual(client.filter((p) => p in props));
    const validate = ajv.compile(body);
    expect(validate(record.example) ? [] : validate.errors).toEqual([]);
  },
);

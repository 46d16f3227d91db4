import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenAPIV3 } from 'openapi-types';
import { collections } from '../src/collections';
import { loadSpec } from '../src/spec';
import { deref } from './helpers/fuzz/spec';

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

// Write schemas show only what a client may send: generated clients offer no id or timestamps.
// (The service still accepts and ignores them in bodies: tests/handlers/validation.test.ts.)
test.each(collections.map((c) => c.resource).flatMap((r) => [`${r}Write`, `${r}Patch`]))('%s lists no field the service sets', (name) => {
  const props = Object.keys((spec.components!.schemas![name] as OpenAPIV3.SchemaObject).properties ?? {});
  expect(props.length).toBeGreaterThan(0);
  expect(props.filter((p) => ['id', 'created_at', 'updated_at'].includes(p))).toEqual([]);
});

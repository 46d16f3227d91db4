import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { OpenAPIV3 } from 'openapi-types';

/**
 * The project's root: this file runs as src/spec.ts under tsx and as dist/spec.js when built
 * (tsconfig.build.json keeps src/'s layout in dist/), one level below the root either way.
 */
const ROOT = join(__dirname, '..');
export const SPEC_PATH = join(ROOT, 'openapi', 'openapi.yaml');
/** Built by `npm run docs` (also run by `npm install`). */
export const DOCS_PATH = join(ROOT, 'build', 'docs', 'index.html');

export function readSpecText(): string {
  return readFileSync(SPEC_PATH, 'utf8');
}

/** The hand-written contract, parsed. Each call returns a fresh copy (openapi-backend mutates it). */
export function loadSpec(text: string = readSpecText()): OpenAPIV3.Document {
  return parse(text) as OpenAPIV3.Document;
}

/** What a local `$ref` (`#/components/schemas/Post`) points at in `root`. */
export function pointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are resolved, not ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], root);
}

/**
 * A property that a request body may carry and whose value the service ignores (`id` and the
 * timestamps in a write schema: `x-set-by-service`), so that a record fetched can be sent back.
 */
export function isSetByService(schema: object): boolean {
  return (schema as Record<string, unknown>)['x-set-by-service'] === true;
}

/**
 * The fields a client sets, in the order of the resource's write schema (`PostWrite`): every
 * property but those set by the service, each resolved (a defaulted field `$ref`s its schema).
 */
export function clientProperties(spec: OpenAPIV3.Document, resource: string): Record<string, OpenAPIV3.SchemaObject> {
  const write = spec.components?.schemas?.[`${resource}Write`] as OpenAPIV3.SchemaObject;
  const resolved = (p: object) => ('$ref' in p ? (pointer(spec, String(p.$ref)) as OpenAPIV3.SchemaObject) : p);
  const entries = Object.entries(write.properties ?? {})
    .map(([name, p]) => [name, resolved(p)] as const)
    .filter(([, p]) => !isSetByService(p));
  return Object.fromEntries(entries);
}

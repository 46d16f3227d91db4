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

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { OpenAPIV3 } from 'openapi-types';

export const SPEC_PATH = join(__dirname, '..', 'openapi', 'openapi.yaml');
/** Built by `npm run docs` (also run by `npm install`). */
export const DOCS_PATH = join(__dirname, '..', 'build', 'docs', 'index.html');

export function readSpecText(): string {
  return readFileSync(SPEC_PATH, 'utf8');
}

/** The hand-written contract, parsed. Each call returns a fresh copy (openapi-backend mutates it). */
export function loadSpec(text: string = readSpecText()): OpenAPIV3.Document {
  return parse(text) as OpenAPIV3.Document;
}

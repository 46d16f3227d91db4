import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { OpenAPIV3 } from 'openapi-types';

export const SPEC_PATH = join(__dirname, '..', 'openapi', 'openapi.yaml');

/** The hand-written contract, parsed. Each call returns a fresh copy (openapi-backend mutates it). */
export function loadSpec(): OpenAPIV3.Document {
  return parse(readFileSync(SPEC_PATH, 'utf8')) as OpenAPIV3.Document;
}

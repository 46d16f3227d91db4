// `npm run check:breaking`: fails when openapi/openapi.yaml breaks a client of the last released
// contract (openapi/released/openapi.yaml) without a new major info.version. See the README's
// "Releasing the contract" for the rule table and the release step.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { gate } from './breaking/index';

const read = (path: string): unknown => parse(readFileSync(join(__dirname, '..', path), 'utf8'));
const result = gate(read('openapi/released/openapi.yaml'), read('openapi/openapi.yaml'));
for (const b of result.breaking)
  console.log(`${result.ok ? 'breaking (allowed by the new major)' : 'BREAKING'}: ${b.where}: ${b.description}`);
console.log(result.message);
process.exit(result.ok ? 0 : 1);

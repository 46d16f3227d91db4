import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SPEC_PATH } from '../../src/spec';

// scripts/spec-edits/issue4.mjs re-applies issue 4's spec edits on top of another branch's spec:
// the committed spec must have them all, and a spec that lost some gets them back exactly.
const SCRIPT = join(__dirname, '..', '..', 'scripts', 'spec-edits', 'issue4.mjs');
const spec = readFileSync(SPEC_PATH, 'utf8');

function run(args: string[]): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' }) };
  } catch (err) {
    return { code: (err as { status: number }).status, out: String((err as { stdout: string }).stdout) };
  }
}

test('the committed spec has every edit', () => {
  expect(run(['--check'])).toEqual({ code: 0, out: 'openapi/openapi.yaml has the issue 4 edits\n' });
});

test.each<[string, { given: (text: string) => string }]>([
  ['401 and 429 on every /api/ operation', { given: (t) => t.replace(/^ *'(401|429)': \{ \$ref: '#\/components\/responses\/(Unauthorized|TooManyRequests)' \}\n/gm, '') }],
  ['X-Request-Id on responses', { given: (t) => t.replace(/^ *X-Request-Id: \{ \$ref: '#\/components\/headers\/X-Request-Id' \}\n/gm, '') }],
  ['open service operations', { given: (t) => t.replace(/^ {6}security: \[\]\n/gm, '') }],
  ['the 401 and 429 rows of the error table', { given: (t) => t.replace(/^ {4}\| (401|429) \|.*\n/gm, '') }],
])('a spec without %s gets them back, and nothing else changes', (_name, { given }) => {
  const file = join(mkdtempSync(join(tmpdir(), 'spec-edits-')), 'openapi.yaml');
  const stripped = given(spec);
  expect(stripped).not.toBe(spec);
  writeFileSync(file, stripped);
  expect(run([file, '--check']).code).toBe(1);
  expect(run([file]).code).toBe(0);
  expect(readFileSync(file, 'utf8')).toBe(spec);
  expect(run([file]).out).toBe(`${file}: issue 4 edits already applied\n`);
});

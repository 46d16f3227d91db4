import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { OpenAPIV3 } from 'openapi-types';
import { HttpProblem, invalid, problemBody } from '../../../src/problems';
import { problemPage } from '../../../src/problems/page';
import { kindOfType, PROBLEM_KINDS, PROBLEM_TYPES, problemType } from '../../../src/problems/types';
import { loadSpec } from '../../../src/spec';

// The problem types (docs/adr/0024-problem-types.md): one table in src/problems/types.ts, which
// the spec's ProblemKind enum and the table in its description repeat, and which every thrower
// names. tests/helpers/contract.ts holds every problem the suite sees to it.
const spec = loadSpec();
const schema = spec.components!.schemas!.ProblemKind as OpenAPIV3.SchemaObject;

test("the spec's ProblemKind enum lists the table's kinds, in its order", () => {
  expect(schema.enum).toEqual(PROBLEM_KINDS);
});

test("ProblemKind's description tabulates each kind's status, title and what it carries, as the table says", () => {
  const rows = [...(schema.description ?? '').matchAll(/^\| ([a-z-]+) \| (\d{3}) \| ([^|]+) \| ([^|]*)\|$/gm)].map(
    ([, kind, status, title, also]) => [kind, Number(status), title.trim(), also.trim()],
  );
  expect(rows).toEqual(
    PROBLEM_KINDS.map((kind) => {
      const { status, title, fields, headers } = PROBLEM_TYPES[kind];
      return [kind, status, title, [...fields, ...headers].map((x) => `\`${x}\``).join(', ')];
    }),
  );
});

test('every kind has a status of an error, a title, one paragraph, and is unique in its title', () => {
  for (const kind of PROBLEM_KINDS) {
    const { status, title, description } = PROBLEM_TYPES[kind];
    expect([kind, status >= 400 && status <= 599, title.length > 0, /\S/.test(description) && !description.includes('\n')]).toEqual([
      kind,
      true,
      true,
      true,
    ]);
  }
  expect(new Set(PROBLEM_KINDS.map((k) => PROBLEM_TYPES[k].title)).size).toBe(PROBLEM_KINDS.length);
});

test('a type names its kind; about:blank and other URIs name none', () => {
  for (const kind of PROBLEM_KINDS) expect(kindOfType(problemType(kind))).toBe(kind);
  for (const other of ['about:blank', '/problems/', '/problems/nope', 'problems/unique', '/problems/unique/', '/problems/toString', 42]) {
    expect(kindOfType(other)).toBeUndefined();
  }
});

test("a problem takes its kind's status and title; detail, errors and request_id are its own", () => {
  const problem = new HttpProblem('unique', 'Another book already has this isbn', [{ field: 'isbn', message: 'must be unique' }]);
  expect(problem.status).toBe(409);
  expect(problemBody(problem.kind, problem.detail, problem.errors, 'r-1')).toEqual({
    type: '/problems/unique',
    title: 'Unique value taken',
    status: 409,
    detail: 'Another book already has this isbn',
    request_id: 'r-1',
    errors: [{ field: 'isbn', message: 'must be unique' }],
  });
  expect(invalid([{ field: 'title', message: 'is required' }])).toMatchObject({ kind: 'validation', status: 400 });
});

test("each kind's page names it, its status and title, and what its problems carry, escaped", () => {
  for (const kind of PROBLEM_KINDS) {
    const page = problemPage(kind);
    const { status, title, fields, headers } = PROBLEM_TYPES[kind];
    expect(page).toContain(`<code>/problems/${kind}</code>`);
    expect(page).toContain(`<strong>${status}</strong>`);
    expect(page).toContain(`<h1>${title}</h1>`);
    for (const name of [...fields, ...headers]) expect([kind, page.includes(`<code>${name}</code>`)]).toEqual([kind, true]);
    // Only the page's own markup: the descriptions' `<token>` is text.
    expect(page).not.toMatch(/<(?!\/?(html|head|meta|title|body|h1|p|code|strong|a)\b|!DOCTYPE)/);
  }
  expect(problemPage('token-missing')).toContain('Bearer &lt;token&gt;');
});

// Each kind is answered somewhere: a kind that nothing throws any more is taken out of the table
// (and the spec), so that the list a client switches on stays the list it can get.
const SRC = resolve(__dirname, '../../../src');
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === 'generated' ? [] : sources(join(dir, e.name))) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
const code = sources(SRC)
  .filter((f) => !f.endsWith(join('problems', 'types.ts')))
  .map((f) => readFileSync(f, 'utf8'))
  .join('\n');

test.each(PROBLEM_KINDS)('%s is named by some code that answers it', (kind) => {
  expect(code).toContain(`'${kind}'`);
});

// docs/rules.md shows a row a kind; it must name each kind once, with its status.
test("docs/rules.md's table of errors names every kind once, with its status", () => {
  const rules = readFileSync(resolve(__dirname, '../../../docs/rules.md'), 'utf8');
  const rows = [...rules.matchAll(/^\| (\d{3}) \| `([a-z-]+)` \|/gm)].map(([, status, kind]) => [kind, Number(status)]);
  expect(rows).toEqual(PROBLEM_KINDS.map((kind) => [kind, PROBLEM_TYPES[kind].status]).sort((a, b) => (a[1] as number) - (b[1] as number)));
});

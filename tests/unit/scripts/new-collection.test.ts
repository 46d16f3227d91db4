import type { OpenAPIV3 } from 'openapi-types';
import { parse } from 'yaml';
import { type Draft, draftOf, parseField } from '../../../scripts/new-collection/draft';
import { editDeclarations, editMigrations, editSpec } from '../../../scripts/new-collection/edits';
import { declarationOf, specParts } from '../../../scripts/new-collection/spec';
import { scalar, yamlEntries } from '../../../scripts/new-collection/yaml';
import { collections } from '../../../src/collections';
import { loadSpec, pointer, readSpecText } from '../../../src/spec';

// `npm run new-collection` writes a collection's parts of the spec from a template. Told the first
// five collections, it must write their parts as the spec has them: the operations exactly, the
// schemas and parameters up to their descriptions and examples. A change to every collection's
// operations in the spec then fails here until the template has it too.
const spec = loadSpec();

/** The first five, as the command's `--field` lines; genre comes before author because books list its filter first. */
const FIRST: Record<string, { fields: string[]; maxPageSize?: 10 }> = {
  posts: {
    maxPageSize: 10,
    fields: ['title string(100) required search sort', 'content text required search', 'author string(50) required sort filter'],
  },
  products: {
    fields: [
      'name string(200) required search sort',
      'description text search',
      'price decimal required sort filter',
      'stock integer sort filter=stock',
    ],
  },
  books: {
    fields: [
      'title string(200) required search sort',
      'genre string(50) filter',
      'author string(100) required search sort filter',
      'published_date date sort filter',
      'isbn string(10..13) required unique pattern=^([0-9]{9}[0-9X]|[0-9]{13})$ example=9780547928227',
    ],
  },
  users: {
    fields: [
      'username string(150) required search sort unique pattern=^[\\p{L}\\p{M}\\p{Nd}@.+_-]+$ example=ada.lovelace',
      'email email required search sort unique',
      'first_name string(150)',
      'last_name string(150) sort',
    ],
  },
  tasks: {
    fields: [
      'title string(200) required search sort',
      'description text search',
      'status enum(todo,in_progress,done) sort filter',
      'priority enum(low,medium,high) default=medium sort=rank filter',
      'due_date date sort filter',
    ],
  },
};

const drafts = collections.map((c) => [c.name, draftOf(c.name, FIRST[c.name].fields, { maxPageSize: FIRST[c.name].maxPageSize })] as const);

/** The document with `d`'s parts in place of the spec's own. */
function withParts(d: Draft): OpenAPIV3.Document {
  const parts = specParts(d);
  const components = spec.components!;
  return {
    ...spec,
    components: {
      ...components,
      parameters: { ...components.parameters, ...parts.parameters } as never,
      schemas: { ...components.schemas, ...parts.schemas, ...parts.bulkSchemas },
    },
  };
}

/**
 * A schema or parameter with every `$ref` resolved in `doc`, without its descriptions and examples,
 * its `required` in any order (books' fields are told out of order, above).
 */
function rules(node: unknown, doc: OpenAPIV3.Document): unknown {
  if (Array.isArray(node)) return node.map((x) => rules(x, doc));
  if (!node || typeof node !== 'object') return node;
  if ('$ref' in node) return rules(pointer(doc, String(node.$ref)), doc);
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k]) => k !== 'description' && k !== 'example')
      .map(([k, v]) => [
        k,
        k === 'properties'
          ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, rules(s, doc)]))
          : k === 'required' && Array.isArray(v)
            ? [...(v as string[])].sort()
            : rules(v, doc),
      ]),
  );
}

describe.each(drafts)('told %s, the command writes', (name, d) => {
  const parts = specParts(d);
  const generated = withParts(d);
  const R = d.resource;

  test('its operations exactly as the spec has them', () => {
    const own = Object.fromEntries(Object.entries(spec.paths).filter(([p]) => p.startsWith(`/api/${name}/`)));
    expect(parts.paths).toEqual(own);
  });

  test('its declaration as src/collections.ts has it', () => {
    expect(declarationOf(d)).toEqual(JSON.parse(JSON.stringify(collections.find((c) => c.name === name))));
  });

  test('its tag, and its parameters with the rules of the spec', () => {
    expect((spec.tags ?? []).map((t) => t.name)).toContain(parts.tag.name);
    const own = Object.keys(spec.components!.parameters!).filter((p) => p.startsWith(`${name}_`));
    expect(Object.keys(parts.parameters).sort()).toEqual(own.sort());
    for (const p of own) {
      // A new list filter is bounded (maxItems, for the security lint); tasks' are exempted in .spectral.yaml.
      const { maxItems: _bound, ...mine } = (parts.parameters[p].schema ?? {}) as Record<string, unknown>;
      const written =
        name === 'tasks' && p !== 'tasks_ordering' && parts.parameters[p].style === 'form'
          ? { ...parts.parameters[p], schema: mine }
          : parts.parameters[p];
      expect([p, rules(written, generated)]).toEqual([p, rules(spec.components!.parameters![p], spec)]);
    }
    const { example: _example, ...ordering } = parts.parameters[`${name}_ordering`];
    expect(spec.components!.parameters![`${name}_ordering`]).toMatchObject(ordering);
  });

  test.each(['Write', 'Patch', '', 'Page', 'BulkCreate', 'BulkCreated'])(`its schema ${R}%s with the rules of the spec`, (suffix) => {
    const mine = { ...parts.schemas, ...parts.bulkSchemas }[`${R}${suffix}`];
    const theirs = spec.components!.schemas![`${R}${suffix}`] as OpenAPIV3.SchemaObject;
    expect(rules(mine, generated)).toEqual(rules(theirs, spec));
    // A field with a schema of its own (a default, an enum) is a $ref there too.
    const refs = (s: object) =>
      Object.fromEntries(Object.entries((s as OpenAPIV3.SchemaObject).properties ?? {}).map(([f, p]) => [f, '$ref' in p]));
    expect(refs(mine)).toEqual(refs(theirs));
  });
});

const comments = draftOf('comments', [
  'body text required search',
  'author string(50) required search sort filter',
  'slug string(80) required unique',
  'post_id integer(1..2147483647) required sort filter',
  'status enum(visible,hidden,spam) default=visible sort=rank filter',
  'approved boolean',
]);

describe('a new collection, written into the spec', () => {
  const { text, missed } = editSpec(readSpecText(), comments, specParts(comments), collections);
  const after = loadSpec(text);
  const guide = after.info.description ?? '';

  test('adds its parts and changes nothing else but the prose', () => {
    const parts = specParts(comments);
    const { info: _a, ...before } = spec;
    const { info: _b, ...rest } = after;
    const without = <T extends object>(o: T | undefined, keys: string[]) =>
      Object.fromEntries(Object.entries(o ?? {}).filter(([k]) => !keys.includes(k)));
    expect({
      ...rest,
      tags: rest.tags!.filter((t) => t.name !== 'comments'),
      paths: without(rest.paths, Object.keys(parts.paths)),
      components: {
        ...rest.components,
        parameters: without(rest.components!.parameters, Object.keys(parts.parameters)),
        schemas: without(rest.components!.schemas, [...Object.keys(parts.schemas), ...Object.keys(parts.bulkSchemas)]),
      },
    }).toEqual(before);
    expect(after.tags!.find((t) => t.name === 'comments')).toEqual(parts.tag);
    expect(Object.keys(after.paths).filter((p) => p.startsWith('/api/comments/'))).toEqual(Object.keys(parts.paths));
    for (const [name, schema] of Object.entries({ ...parts.schemas, ...parts.bulkSchemas }))
      expect(after.components!.schemas![name]).toEqual(schema);
  });

  test('names it in every piece of prose that lists the collections, each line at most 100 columns', () => {
    expect(missed).toEqual([]);
    expect(guide).toMatch(/such as `posts`, `products`, `books`, `users`, `tasks` and\s+`comments`\./);
    expect(guide).toContain('| comments | body, author |');
    expect(guide).toMatch(/`users\.email`, `comments\.slug`\)/);
    expect(guide.replace(/\s+/g, ' ')).toContain(
      '; comments `author`, `min_post_id`, `max_post_id`, `status` (one value or several, comma-separated). Bounds are inclusive',
    );
    expect(guide.replace(/\s+/g, ' ')).toContain("A comment's `status` sorts by rank, `visible` < `hidden` < `spam`.");
    const before = new Set(readSpecText().split('\n'));
    const changed = text.split('\n').filter((l) => !before.has(l) && !l.trimStart().startsWith('|'));
    expect(changed.slice(0, 12).filter((l) => l.length > 100)).toEqual([]);
  });

  test('writes YAML that reads back as the parts, in the spec style', () => {
    const parts = specParts(comments);
    expect(parse(yamlEntries(parts.schemas, 4))).toEqual(parts.schemas);
    expect(yamlEntries({ CommentApproved: parts.schemas.CommentApproved }, 4)).toBe(
      [
        '    CommentApproved:',
        '      type: boolean',
        '      default: false',
        "      description: '`false` when a create or replace leaves it out.'",
        '      example: true',
        '',
      ].join('\n'),
    );
  });
});

test('scalars that another YAML reader could take for a date, a number or a boolean are quoted', () => {
  expect(['2026-01-31', '19.99', '42', 'yes', 'null', '#/x', 'a: b', '', ' x'].map((v) => scalar(v, false))).toEqual([
    "'2026-01-31'",
    "'19.99'",
    "'42'",
    "'yes'",
    "'null'",
    "'#/x'",
    "'a: b'",
    "''",
    "' x'",
  ]);
  expect([scalar('posts:read', true), scalar('http://x/', true), scalar('-created_at', true), scalar("it's", false)]).toEqual([
    'posts:read',
    "'http://x/'",
    '-created_at',
    "it's",
  ]);
});

describe('the migration', () => {
  const text = [
    "const migrations = { '20261122_001_records': {} };",
    "migrations['20261128_013_search_postings'] = {",
    '};',
    "migrations['20261207_015_text_nfc'] = {",
    '};',
    '',
    'function after() {}',
  ].join('\n');

  test('takes the number after the highest, never one left free, after the last migration', () => {
    const { text: edited, key } = editMigrations(text, 'comments', '20261208');
    expect(key).toBe('20261208_016_comments');
    expect(edited).toContain("};\n\nmigrations['20261208_016_comments'] = recordTableMigration('comments');\n\nfunction after");
  });

  test('counts the keys of every migration in use, not only those of the file', () => {
    expect(editMigrations(text, 'comments', '20261208', ['20261122_001_records', '20261209_017_search']).key).toBe('20261209_018_comments');
  });

  test("keeps the latest key's date when today sorts before it, so that it runs last", () => {
    expect(editMigrations(text, 'comments', '20250101').key).toBe('20261207_016_comments');
  });
});

test('the declaration goes at the end of collections', () => {
  const edited = editDeclarations("export const collections = [\n  collection({ name: 'posts' }),\n] as const;\n", comments);
  expect(edited).toMatch(/name: 'posts' \}\),\n {2}collection\(\{ name: 'comments', [^\n]*\}\),\n\] as const;/);
});

test.each([
  ['slug string(80) unique', /unique fields are required/],
  ['approved boolean filter', /boolean filter is not supported/],
  ['contact email', /email field is required/],
  ['code string(8) required pattern=^[A-Z]+$', /needs example=/],
  ['body text sort', /not sortable/],
  ['id integer', /service sets or uses/],
  ['title string', /maximum length/],
  ['kind enum(a) filter', /two or more distinct values/],
  ['n integer(1..10) default=11', /out of bounds/],
])('refuses --field %p', (line, why) => {
  expect(() => parseField(line)).toThrow(why);
});

test('refuses a collection that searches nothing, or names a filter twice', () => {
  expect(() => draftOf('notes', ['title string(50) required'])).toThrow(/no field is searched/);
  expect(() => draftOf('notes', ['title string(50) required search filter', 'title string(9)'])).toThrow(/named twice/);
  expect(() => draftOf('people', ['name string(50) required search'])).toThrow(/--resource/);
});

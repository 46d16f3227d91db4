import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { gate } from '../../../scripts/breaking/index';

// The breaking-change gate against real edits of our own contract: each breaking edit fails
// under the same major version and passes with a new one; each compatible edit passes.
const root = join(__dirname, '../../..');
const spec = parse(readFileSync(join(root, 'openapi/openapi.yaml'), 'utf8'));
type Doc = Record<string, any>;
const S = (d: Doc) => d.components.schemas;

const breaking: [string, (d: Doc) => void][] = [
  ['a path removed', (d) => delete d.paths['/api/books/{id}/']],
  ['an operation removed', (d) => delete d.paths['/api/posts/{id}/'].delete],
  [
    'a response field removed',
    (d) => {
      delete S(d).Post.properties.author;
      S(d).Post.required = S(d).Post.required.filter((x: string) => x !== 'author');
    },
  ],
  [
    'an enum value removed',
    (d) => {
      S(d).TaskWrite.properties.status.enum = ['todo', 'in_progress'];
    },
  ],
  ['a status code removed', (d) => delete d.paths['/api/posts/'].get.responses['404']],
  [
    'a new required request field',
    (d) => {
      S(d).PostWrite.properties.summary = { type: 'string' };
      S(d).PostWrite.required.push('summary');
    },
  ],
  [
    'a new required query parameter',
    (d) => d.paths['/api/posts/'].get.parameters.push({ name: 'tenant', in: 'query', required: true, schema: { type: 'string' } }),
  ],
  [
    'a request bound narrowed (maxLength)',
    (d) => {
      S(d).PostWrite.properties.title.maxLength = 50;
    },
  ],
  [
    'a request bound narrowed (maximum)',
    (d) => {
      S(d).ProductWrite.properties.stock.maximum = 1000;
    },
  ],
  [
    'a type narrowed (integer to string)',
    (d) => {
      S(d).ProductWrite.properties.stock.type = 'string';
    },
  ],
  [
    'a parameter bound narrowed',
    (d) => {
      d.components.parameters.search.schema.maxLength = 100;
    },
  ],
  [
    'a request content type changed',
    (d) => {
      const c = d.paths['/api/posts/'].post.requestBody.content;
      c['application/vnd.records+json'] = c['application/json'];
      delete c['application/json'];
    },
  ],
  [
    'a response content type changed',
    (d) => {
      const c = d.paths['/api/posts/{id}/'].get.responses['200'].content;
      c['application/vnd.records+json'] = c['application/json'];
      delete c['application/json'];
    },
  ],
];

const compatible: [string, (d: Doc) => void][] = [
  ['nothing changed', () => undefined],
  [
    'a description reworded',
    (d) => {
      d.info.description += '\nMore words.';
    },
  ],
  [
    'a shared response reworded',
    (d) => {
      d.components.responses.ServiceUnavailable.description += ' Retry later.';
    },
  ],
  [
    'an example changed',
    (d) => {
      S(d).PostWrite.example = { title: 'x', content: 'y', author: 'z' };
    },
  ],
  [
    'an optional request field added',
    (d) => {
      S(d).PostWrite.properties.summary = { type: 'string' };
    },
  ],
  [
    'a response field added',
    (d) => {
      S(d).Post.properties.summary = { type: 'string' };
    },
  ],
  [
    'an optional query parameter added',
    (d) => d.paths['/api/posts/'].get.parameters.push({ name: 'tenant', in: 'query', schema: { type: 'string' } }),
  ],
  [
    'a new path',
    (d) => {
      d.paths['/api/notes/'] = structuredClone(d.paths['/api/posts/']);
    },
  ],
  [
    'a new status code',
    (d) => {
      d.paths['/api/posts/'].get.responses['418'] = d.paths['/api/posts/'].get.responses['404'];
    },
  ],
  [
    'a request-only bound widened',
    (d) => {
      d.components.parameters.search.schema.maxLength = 300;
    },
  ],
  [
    'a minor version',
    (d) => {
      d.info.version = '1.1.0';
    },
  ],
];

function edited(edit: (d: Doc) => void, version?: string): Doc {
  const d = structuredClone(spec);
  edit(d);
  if (version) d.info.version = version;
  return d;
}

const nextMajor = `${Number(spec.info.version.split('.')[0]) + 1}.0.0`;

test.each(breaking)('breaking: %s fails under the same major version', (_name, edit) => {
  const result = gate(spec, edited(edit));
  expect(result.ok).toBe(false);
  expect(result.breaking.length).toBeGreaterThan(0);
});

test.each(breaking)('breaking: %s passes with a new major version', (_name, edit) => {
  const result = gate(spec, edited(edit, nextMajor));
  expect(result.ok).toBe(true);
  expect(result.breaking.length).toBeGreaterThan(0);
});

test.each(compatible)('compatible: %s passes', (_name, edit) => {
  expect(gate(spec, edited(edit))).toEqual(expect.objectContaining({ ok: true, breaking: [] }));
});

test('the committed contract passes against the released one (what npm run check:breaking checks)', () => {
  const released = parse(readFileSync(join(root, 'openapi/released/openapi.yaml'), 'utf8'));
  const result = gate(released, spec);
  expect(result).toMatchObject({ ok: true });
});

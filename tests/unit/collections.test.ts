import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { collections } from '../../src/collections';
import { RECORD_TABLES } from '../../src/db/migrations';

// What a collection added with its spec, declaration and migration (docs/adding-a-collection.md)
// must not leave wrong elsewhere.
const root = join(__dirname, '../..');

// Prose that counts the collections ("Five JSON record collections") is wrong once one is added:
// it names them ("such as `posts`") or says "every collection" instead. Decision records keep
// their history and are left out.
const PROSE = [
  'README.md',
  'BENCHMARKS.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  'openapi/openapi.yaml',
];
const COUNT = /\b(two|three|four|five|six|seven|eight|nine|ten|\d+)\b(\s+[^\s]+){0,2}\s+collections\b/gi;

test.each(PROSE)('%s does not count the collections', (file) => {
  const counted = [...readFileSync(join(root, file), 'utf8').matchAll(COUNT)].map((m) => m[0].replace(/\s+/g, ' '));
  expect(counted).toEqual([]);
});

test("package.json's description does not count the collections", () => {
  const { description } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { description: string };
  expect([...description.matchAll(COUNT)].map((m) => m[0])).toEqual([]);
});

// Migrations 002 to 012 change RECORD_TABLES alike; a table added to it would be altered before
// any migration had made it, on every fresh database.
test('RECORD_TABLES stays the tables of migration 001: a new collection gets a migration of its own (createRecordTable)', () => {
  expect(RECORD_TABLES).toEqual(['posts', 'products', 'books', 'users', 'tasks']);
  expect(RECORD_TABLES.filter((t) => !collections.some((c) => c.name === t))).toEqual([]);
});

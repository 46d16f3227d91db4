import { misnumberedMigration } from '../../../src/db/migrations';
import { misnumberedMigration as misnumberedInSchema } from '../../../src/schema';

// Migrations run in the order of their names, date first; their numbers must still be unique,
// or two changes claim one step (the service refuses to start, src/main.ts).
test("the schema's migrations, the records' and search's, each have a number of their own", () => {
  expect(misnumberedInSchema()).toBeUndefined();
});

test.each([
  [
    'a number used twice, whatever the dates',
    ['20261128_013_search_postings', '20261122_001_records', '20261201_013_comments'],
    'migrations 20261128_013_search_postings and 20261201_013_comments share the number 013: give 20261201_013_comments the next free one',
  ],
  ['a name without a number', ['20261122_001_records', '20261201_comments'], 'migration 20261201_comments is not named YYYYMMDD_NNN_what'],
])('%s is refused', (_name, names, want) => {
  expect(misnumberedMigration(names)).toBe(want);
});

test('numbers that are unique pass, gaps included', () => {
  expect(misnumberedMigration(['20261122_001_records', '20261128_013_search_postings', '20261207_015_text_nfc'])).toBeUndefined();
});

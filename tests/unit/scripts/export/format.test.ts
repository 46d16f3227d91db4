import { ExportError, exportFormat } from '../../../../scripts/export/index';

// `npm run export -- --format`: NDJSON unless CSV is asked for; anything else is refused.
test.each([
  [undefined, 'ndjson'],
  ['ndjson', 'ndjson'],
  ['csv', 'csv'],
  ['CSV', 'csv'],
])('--format %s: %s', (flag, want) => {
  expect(exportFormat(flag)).toBe(want);
});

test('an unknown --format is an error naming the known ones', () => {
  expect(() => exportFormat('xlsx')).toThrow(ExportError);
  expect(() => exportFormat('xlsx')).toThrow('--format must be csv or ndjson, not "xlsx"');
});

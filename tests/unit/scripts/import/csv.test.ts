import fc from 'fast-check';
import {
  cellValue,
  type ColumnType,
  columnTypes,
  CsvParser,
  CsvRecordTooLong,
  type CsvRow,
  CsvSyntaxError,
  csvDecoder,
} from '../../../../scripts/import/csv';
import { importFormat, ImportError } from '../../../../scripts/import/index';
import { utf8Pieces, wholeCharacters } from '../../../../scripts/import/lines';
import { collections } from '../../../../src/collections';
import { csvField, csvLine } from '../../../../src/handlers/export';
import { clientProperties, loadSpec } from '../../../../src/spec';

// The import's CSV reader against the export's writer (src/http/export.ts): what csvField writes,
// the reader gives back, however the text is cut into pieces.

const spec = loadSpec();

/** Every record of `text`, fed in pieces cut at `cuts`. */
function parse(text: string, cuts: number[] = [], max?: number): CsvRow[] {
  const parser = new CsvParser(max);
  const at = [0, ...[...new Set(cuts)].filter((c) => c > 0 && c < text.length).sort((a, b) => a - b), text.length];
  const rows: CsvRow[] = [];
  for (let i = 1; i < at.length; i++) rows.push(...parser.push(text.slice(at[i - 1], at[i])));
  return [...rows, ...parser.end()];
}
const texts = (rows: CsvRow[]) => rows.map((r) => r.cells.map((c) => c.text));

describe('CsvParser', () => {
  test.each([
    [
      'CRLF ends',
      'a,b\r\nc,d\r\n',
      [
        ['a', 'b'],
        ['c', 'd'],
      ],
    ],
    [
      'LF and lone CR ends, no end at the last',
      'a,b\nc,d\re,f',
      [
        ['a', 'b'],
        ['c', 'd'],
        ['e', 'f'],
      ],
    ],
    [
      'empty fields, and a comma before the end',
      ',a,\r\n,,\r\n',
      [
        ['', 'a', ''],
        ['', '', ''],
      ],
    ],
    [
      'quotes doubled, commas and line breaks inside quotes',
      '"say ""hi""","a,b","x\r\ny\nz\rw"\r\n',
      [['say "hi"', 'a,b', 'x\r\ny\nz\rw']],
    ],
    ['an empty quoted field', '"",a\r\n', [['', 'a']]],
    ['blank lines between records, which hold none', 'a\r\n\r\n\nb\r\n', [['a'], ['b']]],
    ['unicode kept as it is', '"ÉCOLE 😀",日本\r\n', [['ÉCOLE 😀', '日本']]],
  ])('%s', (_name, text, want) => {
    expect(texts(parse(text))).toEqual(want);
    // The same however the text comes in pieces: one character at a time.
    expect(
      texts(
        parse(
          text,
          Array.from(text, (_c, i) => i),
        ),
      ),
    ).toEqual(want);
  });

  test('marks the cells written in quotes', () => {
    expect(parse('"a",b,"",\r\n')[0].cells.map((c) => c.quoted)).toEqual([true, false, true, false]);
  });

  test('each record has the line it starts on, counting line breaks inside quotes once (CRLF as one)', () => {
    const rows = parse('h\r\n"1\r\n2"\r\n"3\n4\r5"\nnext\r\n\r\nlast', [4, 5, 6]);
    expect(rows.map((r) => r.line)).toEqual([1, 2, 4, 7, 9]);
  });

  test.each([
    ['a quote inside an unquoted field', 'a,b\r\nc,d"e\r\n', 2, /a quote inside a field that does not start with one/],
    ['text after a closing quote', 'a\r\n\r\n"b"c\r\n', 3, /text after the closing quote/],
    ['a quote never closed (named at its line)', 'a\r\nb,"c\r\nd\r\n', 2, /never closed/],
  ])('%s is an error at its line', (_name, text, line, want) => {
    let error: unknown;
    try {
      parse(text);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CsvSyntaxError);
    expect(error).toMatchObject({ line, field: 'record', message: expect.stringMatching(want) });
  });

  test('the records before a fault in the same piece come first; the fault is thrown at the next call', () => {
    const parser = new CsvParser();
    expect(texts(parser.push('a\r\nb\r\nc"d\r\n'))).toEqual([['a'], ['b']]);
    expect(() => parser.end()).toThrow(expect.objectContaining({ line: 3, field: 'record' }));
    const next = new CsvParser();
    next.push('a\r\nc"');
    expect(() => next.push('more')).toThrow(CsvSyntaxError);
  });

  test('a record over the most bytes stops the reader, and says when a quote is open', () => {
    // 'é' is two bytes: 5 of them are 10 bytes, over 9.
    expect(() => parse('a\r\néééé,\r\nééééé\r\n', [], 9)).toThrow(CsvRecordTooLong);
    expect(texts(parse('a\r\néééé\r\n', [], 9))).toEqual([['a'], ['éééé']]);
    expect(() => parse('a\r\n"b\r\n', [], 3)).toThrow(expect.objectContaining({ line: 2, openQuote: 2 }));
    expect(() => parse('a\r\nbcd\r\n', [], 3)).toThrow(expect.objectContaining({ line: 2, openQuote: undefined }));
  });
});

describe('columnTypes', () => {
  test.each(collections.map((c) => [c.name, c] as const))('%s: every write field, id and the timestamps', (_name, c) => {
    const columns = columnTypes(spec, c.resource);
    expect([...columns.keys()].sort()).toEqual(
      [...Object.keys(clientProperties(spec, c.resource)), 'id', 'created_at', 'updated_at'].sort(),
    );
    expect(columns.get('id')).toEqual({ type: 'integer', nullable: false, setByService: true });
    expect(columns.get('created_at')).toEqual({ type: 'string', nullable: false, setByService: true });
  });

  test('reads types and nullability from the spec, through $refs', () => {
    expect(columnTypes(spec, 'Product').get('stock')).toEqual({ type: 'integer', nullable: false, setByService: false });
    expect(columnTypes(spec, 'Task').get('due_date')).toEqual({ type: 'string', nullable: true, setByService: false });
  });
});

const text: ColumnType = { type: 'string', nullable: false, setByService: false };
const nullableText: ColumnType = { ...text, nullable: true };
const integer: ColumnType = { type: 'integer', nullable: false, setByService: false };
const boolean: ColumnType = { type: 'boolean', nullable: false, setByService: false };
const timestamp: ColumnType = { type: 'string', nullable: false, setByService: true };
const cell = (t: string, quoted = false) => ({ text: t, quoted });

describe('cellValue', () => {
  test.each([
    ['text', cell('a b'), text, 'a b'],
    ['an empty cell of text: the empty string', cell(''), text, ''],
    ['an empty cell where null may be: null', cell(''), nullableText, null],
    ['an empty cell of a number: left out', cell(''), integer, undefined],
    ['an empty cell of a set-by-service field: left out', cell(''), timestamp, undefined],
    ['an integer', cell('-12'), integer, -12],
    ['a decimal number', cell('1.5e3'), { ...integer, type: 'number' }, 1500],
    ['no number: kept as text, for the schema to refuse', cell('12 apples'), integer, '12 apples'],
    ['true', cell('true'), boolean, true],
    ['false', cell('false'), boolean, false],
    ['no boolean: kept as text', cell('yes'), boolean, 'yes'],
    ['a decimal string stays text', cell('349.90'), text, '349.90'],
    ["a guarded cell loses its '", cell("'=SUM(A1)", true), text, '=SUM(A1)'],
    ["a guarded cell that starts with ' loses one", cell("''-1", true), text, "'-1"],
    ["an unquoted cell keeps its '", cell("'=x"), text, "'=x"],
    ["a quoted cell whose ' guards nothing keeps it", cell("'a,b", true), text, "'a,b"],
  ])('%s', (_name, given, column, want) => {
    expect(cellValue(given, column)).toEqual(want);
  });
});

describe('csvDecoder', () => {
  const columns = columnTypes(spec, 'Task');
  const header = (...names: string[]): CsvRow => ({ line: 1, cells: names.map((n) => cell(n)) });

  test('a header names fields in any order, and may leave some out', () => {
    const decode = csvDecoder(columns, 'tasks', header('due_date', 'title'));
    expect(decode({ line: 2, cells: [cell(''), cell('T')] })).toEqual({ ok: true, body: { due_date: null, title: 'T' } });
  });

  test('a record with another count of fields than the header', () => {
    const decode = csvDecoder(columns, 'tasks', header('title', 'status'));
    expect(decode({ line: 2, cells: [cell('T')] })).toEqual({
      ok: false,
      errors: [{ field: 'record', message: 'has 1 fields where the header has 2' }],
    });
  });

  test.each([
    [
      'an unknown field',
      header('title', 'colour'),
      { field: 'colour', message: expect.stringMatching(/^is not a field of tasks \(title, /) },
    ],
    ['a field named twice', header('title', 'title'), { field: 'title', message: 'is named twice in the header' }],
    ['a column with no name', header('title', ''), { field: 'column 2' }],
  ])('a header with %s is an error', (_name, given, want) => {
    expect(() => csvDecoder(columns, 'tasks', given)).toThrow(expect.objectContaining({ line: 1, ...want }));
  });
});

// The export's own writer, inverted: any text, number, boolean or null comes back as it went.
describe('reading what csvField writes', () => {
  const columnOf = (v: unknown): ColumnType =>
    v === null ? nullableText : typeof v === 'number' ? integer : typeof v === 'boolean' ? boolean : text;
  const value = fc.oneof(
    fc.string({ unit: fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', "'", '"', ',', ' ', 'a', 'é', '😀') }),
    fc.string({ unit: 'grapheme' }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
  );

  test('every value, however the text is cut', () => {
    fc.assert(
      fc.property(fc.array(fc.array(value, { minLength: 2, maxLength: 2 }), { maxLength: 5 }), fc.array(fc.nat()), (records, cuts) => {
        const columns = ['x', 'y'];
        const csv = csvLine(columns, { x: 'x', y: 'y' }) + records.map(([x, y]) => csvLine(columns, { x, y })).join('');
        const rows = parse(csv, cuts);
        expect(rows).toHaveLength(records.length + 1);
        rows.slice(1).forEach((row, i) => {
          expect(row.cells.map((c, j) => cellValue(c, columnOf(records[i][j])))).toEqual(records[i]);
        });
      }),
    );
  });

  test("text that starts with ' before a formula character is guarded too, so that one ' off gives it back", () => {
    expect(csvField("'=x")).toBe(`"''=x"`);
    expect(cellValue(parse(`${csvField("'=x,y")}\r\n`)[0].cells[0], text)).toBe("'=x,y");
  });
});

describe('importFormat', () => {
  test.each([
    [undefined, 'a.csv', 'csv'],
    [undefined, 'A.CSV', 'csv'],
    [undefined, 'a.ndjson', 'ndjson'],
    [undefined, 'a.jsonl', 'ndjson'],
    [undefined, 'a.txt', 'ndjson'],
    [undefined, 'records', 'ndjson'],
    ['csv', 'a.jsonl', 'csv'],
    ['ndjson', 'a.csv', 'ndjson'],
    ['CSV', 'a', 'csv'],
  ])('--format %s, file %s: %s', (flag, file, want) => {
    expect(importFormat(flag, file)).toBe(want);
  });

  test('an unknown --format is an error naming the known ones', () => {
    expect(() => importFormat('xml', 'a.csv')).toThrow(ImportError);
    expect(() => importFormat('xml', 'a.csv')).toThrow('--format must be csv or ndjson, not "xml"');
  });
});

describe('utf8Pieces and wholeCharacters', () => {
  test('bytes that are UTF-8 are one piece', () => {
    expect(utf8Pieces(Buffer.from('a\r\nb"é"\n'))).toEqual(['a\r\nb"é"\n']);
  });

  test('bytes that are not: the text of the lines before, then undefined', () => {
    const bytes = Buffer.concat([Buffer.from('a\r\nb\rc'), Buffer.from([0xff]), Buffer.from('\nd')]);
    expect(utf8Pieces(bytes)).toEqual(['a\r', '\n', 'b\r', undefined]);
  });

  test('a chunk that ends inside a character ends before it', () => {
    const e = Buffer.from('é'); // C3 A9
    const smile = Buffer.from('😀'); // F0 9F 98 80
    expect(wholeCharacters(Buffer.concat([Buffer.from('ab'), e.subarray(0, 1)]))).toBe(2);
    expect(wholeCharacters(Buffer.concat([Buffer.from('ab'), smile.subarray(0, 3)]))).toBe(2);
    expect(wholeCharacters(Buffer.concat([Buffer.from('ab'), smile]))).toBe(6);
    expect(wholeCharacters(Buffer.concat([Buffer.from('ab'), e]))).toBe(4);
  });
});

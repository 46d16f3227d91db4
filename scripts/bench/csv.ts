// `npx tsx scripts/bench/csv.ts [--rows 100000]`: the CSV the export writes (csvLine) and the
// import reads (CsvParser), in this process, against csv-stringify and csv-parse when they are
// installed (`npm install --no-save csv-parse csv-stringify`; not dependencies: ADR 0020 says why).
// Each figure is the median of 5 runs; the load is `uptime`'s.
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { CsvParser } from '../import/csv';
import { csvLine } from '../../src/handlers/export';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '100000' } } });
const ROWS = Number(values.rows);
const PIECE = 64 * 1024;
const COLUMNS = ['id', 'title', 'content', 'author', 'price', 'in_stock', 'due_date', 'created_at', 'updated_at'];

/** Rows with what CSV must quote or guard: commas, quotes, line breaks, formulas, nulls. */
const records = Array.from({ length: ROWS }, (_, i) => ({
  id: i + 1,
  title: i % 10 === 0 ? `=SUM(A${i})` : `Title ${i}, with a comma`,
  content: i % 7 === 0 ? `He said "hi"\r\nthen left ${i}` : `Plain content of record ${i} `.repeat(4),
  author: i % 13 === 0 ? '-dash' : `author${i % 100}`,
  price: i * 1.25,
  in_stock: i % 2 === 0,
  due_date: i % 3 === 0 ? null : '2026-12-01',
  created_at: '2026-12-07T10:00:00.000Z',
  updated_at: '2026-12-07T10:00:00.000Z',
}));

function median(run: () => number): number {
  const times = Array.from({ length: 5 }, () => {
    const start = process.hrtime.bigint();
    const count = run();
    if (count !== ROWS) throw new Error(`${count} rows, not ${ROWS}`);
    return Number(process.hrtime.bigint() - start) / 1e6;
  });
  return times.sort((a, b) => a - b)[2];
}

const text = records.map((r) => csvLine(COLUMNS, r)).join('');
const figures: Record<string, number> = {
  'export, csvLine': median(() => records.reduce((n, r) => (csvLine(COLUMNS, r), n + 1), 0)),
  'import, CsvParser': median(() => {
    const parser = new CsvParser();
    let n = 0;
    for (let i = 0; i < text.length; i += PIECE) n += parser.push(text.slice(i, i + PIECE)).length;
    return n + parser.end().length;
  }),
};

// The libraries' own shapes, as far as used here.
type Stream = { write(chunk: unknown): boolean; read(): unknown; end(): void; on(event: 'error', f: () => void): void };
type Cast = (value: string, context: { quoting: boolean }) => unknown;
const require = createRequire(__filename);
const optional = <T>(name: string): T | undefined => {
  try {
    return require(name) as T;
  } catch {
    return undefined;
  }
};
const stringify = optional<{ Stringifier: new (options: object) => Stream }>('csv-stringify');
const parse = optional<{ Parser: new (options: object) => Stream }>('csv-parse');

if (stringify) {
  const FORMULA_START = /^'*[=+\-@\t\r]/;
  const options = {
    columns: COLUMNS,
    record_delimiter: '\r\n',
    cast: {
      // The export's guard: a leading ' and quotes.
      string: (v: string) => (FORMULA_START.test(v) ? { value: `'${v}`, quoted: true } : v),
      boolean: (v: boolean) => String(v),
      number: (v: number) => JSON.stringify(v),
    },
  };
  figures['export, csv-stringify'] = median(() => {
    const stringifier = new stringify.Stringifier(options);
    let n = 0;
    for (const record of records) {
      stringifier.write(record);
      while (stringifier.read() !== null) n++;
    }
    return n;
  });
}
if (parse) {
  const delimiters = { record_delimiter: ['\r\n', '\n', '\r'], skip_empty_lines: true, relax_column_count: true };
  const read = (options: object) => () => {
    const parser = new parse.Parser(options);
    parser.on('error', () => {});
    let n = 0;
    for (let i = 0; i < text.length; i += PIECE) {
      parser.write(text.slice(i, i + PIECE));
      while (parser.read() !== null) n++;
    }
    parser.end();
    while (parser.read() !== null) n++;
    return n;
  };
  figures['import, csv-parse, no quoted flag'] = median(read(delimiters));
  // A cell's quoted flag, which the formula guard needs, is only given to a cast function.
  const cast: Cast = (value, context) => ({ text: value, quoted: context.quoting });
  figures['import, csv-parse, cast for the quoted flag'] = median(read({ ...delimiters, cast }));
}

console.log(
  `${ROWS.toLocaleString('en')} rows, ${(Buffer.byteLength(text) / 1e6).toFixed(1)} MB of CSV; load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
for (const [name, ms] of Object.entries(figures)) console.log(`${name.padEnd(45)} ${ms.toFixed(0).padStart(6)} ms`);

// Imports an NDJSON or CSV file into one collection: every record is checked first (nothing is
// written when one is bad), then all rows go in one transaction.
import { migrate } from '../../src/schema';
import { extname } from 'node:path';
import { type Collection, collectionNamed } from '../../src/collections';
import { type Db } from '../../src/db/connection';
import { indexLoaded } from '../../src/search';
import { dbTimestamp } from '../../src/db/time';
import { loadSpec } from '../../src/spec';
import { type ColumnType, columnTypes, CsvParser, CsvRecordTooLong, type CsvRow, CsvSyntaxError, csvDecoder } from './csv';
import { LineTooLong, utf8Lines, utf8Text } from './lines';
import { type Checked, type Checker, lineChecker, type ImportRecord } from './validate';
import { type Value, writeRows } from './write';

export class ImportError extends Error {}

export type ImportFormat = 'ndjson' | 'csv';

const BY_EXTENSION: Readonly<Record<string, ImportFormat>> = { '.csv': 'csv', '.ndjson': 'ndjson', '.jsonl': 'ndjson' };

/** The format `--format` names, else the file's extension says, else NDJSON. */
export function importFormat(flag: string | undefined, file: string): ImportFormat {
  if (flag === undefined) return BY_EXTENSION[extname(file).toLowerCase()] ?? 'ndjson';
  const format = flag.toLowerCase();
  if (format === 'csv' || format === 'ndjson') return format;
  throw new ImportError(`--format must be csv or ndjson, not ${JSON.stringify(flag)}`);
}

export interface ImportOptions {
  onValidated?: (lines: number) => void;
  onWritten?: (rows: number) => void;
  /** SQLite: nothing else uses the file; write into it directly, not through the WAL (write.ts). */
  exclusive?: boolean;
  /** SQLite, with `exclusive`: whether the load writes directly (false: another connection has the file open). */
  onDirect?: (direct: boolean) => void;
  onIndexed?: (rows: number) => void;
  /** The most bytes a line (a CSV record) may have (the command passes the service's BODY_LIMIT). */
  maxLineBytes?: number;
  /** By default, as the file's extension says (importFormat). */
  format?: ImportFormat;
}

/**
 * The file's numbered lines that hold something. A line over `maxBytes` (BODY_LIMIT: the API
 * takes no larger record) stops the import, so that a file with no line end is not read whole.
 */
async function* lines(file: string, maxBytes: number): AsyncGenerator<[number, string]> {
  let n = 0;
  const tooLong = (at: number) =>
    new ImportError(
      `line ${at}: line: is over ${maxBytes.toLocaleString('en')} bytes, the largest record the API takes (BODY_LIMIT); ` +
        'the file must hold one JSON record a line; nothing was imported',
    );
  try {
    for await (const batch of utf8Lines(file, maxBytes)) {
      for (const line of batch) {
        n++;
        if (line === undefined) throw new ImportError(`line ${n}: line: is not valid UTF-8; nothing was imported`);
        // UTF-8 takes at most 3 bytes per UTF-16 unit: most lines need no count.
        if (line.length * 3 > maxBytes && Buffer.byteLength(line) > maxBytes) throw tooLong(n);
        // Blank lines (a trailing newline, a gap) hold no record.
        if (line.trim() !== '') yield [n, line];
      }
    }
  } catch (err) {
    throw err instanceof LineTooLong ? tooLong(n + 1) : err;
  }
}

/** An NDJSON file's records, checked, each with its line. */
async function* ndjsonRecords(file: string, maxBytes: number, checker: Checker): AsyncGenerator<[number, Checked]> {
  for await (const [n, line] of lines(file, maxBytes)) yield [n, checker.check(line)];
}

/**
 * A CSV file's records, checked, each with the line it starts on: a header row, then one record
 * a row, as an export writes them (csv.ts). A byte order mark, which spreadsheets write, is
 * skipped. A record over `maxBytes` stops the import, as a line does.
 */
async function* csvRecords(
  file: string,
  maxBytes: number,
  checker: Checker,
  c: Collection,
  columns: Map<string, ColumnType>,
): AsyncGenerator<[number, Checked]> {
  const parser = new CsvParser(maxBytes);
  let decode: ReturnType<typeof csvDecoder> | undefined;
  function* checked(rows: CsvRow[]): Generator<[number, Checked]> {
    for (const row of rows) {
      if (!decode) decode = csvDecoder(columns, c.name, row);
      else {
        const decoded = decode(row);
        yield [row.line, decoded.ok ? checker.checkBody(decoded.body) : decoded];
      }
    }
  }
  let first = true;
  try {
    for await (let text of utf8Text(file)) {
      if (text === undefined) throw new ImportError(`line ${parser.line}: line: is not valid UTF-8; nothing was imported`);
      if (first && text.startsWith('\ufeff')) text = text.slice(1);
      first &&= text === '';
      yield* checked(parser.push(text));
    }
    yield* checked(parser.end());
  } catch (err) {
    if (err instanceof CsvSyntaxError) throw new ImportError(`line ${err.line}: ${err.field}: ${err.message}; nothing was imported`);
    if (err instanceof CsvRecordTooLong) {
      const open = err.openQuote === undefined ? '' : ` (a quoted field opened on line ${err.openQuote} is still open)`;
      throw new ImportError(
        `line ${err.line}: record: is over ${maxBytes.toLocaleString('en')} bytes, the largest record the API takes (BODY_LIMIT)${open}; ` +
          'nothing was imported',
      );
    }
    throw err;
  }
}

/** Unique values as the database compares them: email ignoring (ASCII) case, others exactly. */
function uniqueKey(field: string, value: unknown): string {
  return field === 'email' ? String(value).toLowerCase() : String(value);
}

export async function importFile(db: Db, collection: string, file: string, options: ImportOptions = {}): Promise<number> {
  const c = collectionNamed(collection, (message) => new ImportError(message));
  const spec = loadSpec();
  const checker = lineChecker(spec, c);
  const { fields } = checker;
  const maxLineBytes = options.maxLineBytes ?? Infinity;
  const format = options.format ?? importFormat(undefined, file);
  const csvColumns = format === 'csv' ? columnTypes(spec, c.resource) : undefined;
  const records = () => (csvColumns ? csvRecords(file, maxLineBytes, checker, c, csvColumns) : ndjsonRecords(file, maxLineBytes, checker));

  // Pass 1: every record valid, and unique fields unique within the file.
  const seen = new Map<string, Map<string, number>>(c.uniqueFields.map((f) => [f, new Map()]));
  let count = 0;
  for await (const [n, checked] of records()) {
    if (!checked.ok) {
      const { field, message } = checked.errors[0];
      throw new ImportError(`line ${n}: ${field}: ${message}; nothing was imported`);
    }
    for (const [field, values] of seen) {
      const key = uniqueKey(field, checked.record.values[field]);
      const first = values.get(key);
      if (first !== undefined)
        throw new ImportError(`line ${n}: ${field}: must be unique; line ${first} has the same value; nothing was imported`);
      values.set(key, n);
    }
    if (++count % 50_000 === 0) options.onValidated?.(count);
  }
  options.onValidated?.(count);

  await migrate(db);
  // ... and not taken by a record already there (the database compares as it does on create).
  for (const [field, values] of seen) {
    const keys = [...values.keys()];
    for (let i = 0; i < keys.length; i += 1000) {
      const taken: unknown[] = await db(c.name)
        .whereIn(field, keys.slice(i, i + 1000))
        .pluck(field);
      if (taken.length) {
        const line = values.get(uniqueKey(field, taken[0]));
        throw new ImportError(`line ${line}: ${field}: must be unique; a record already has this value; nothing was imported`);
      }
    }
  }

  // Pass 2: the same records, now known to be valid, written in one transaction.
  const columns = [...fields, 'created_at', 'updated_at'];
  const now = dbTimestamp();
  const stamp = (iso: string) => iso.replace('T', ' ').replace('Z', '');
  async function* rows(): AsyncGenerator<Value[]> {
    for await (const [, checked] of records()) {
      const record = (checked as { record: ImportRecord }).record;
      // A record whose updated_at alone is given was created no later than that.
      const created = record.created_at ? stamp(record.created_at) : record.updated_at ? stamp(record.updated_at) : now;
      const updated = record.updated_at ? stamp(record.updated_at) : created;
      yield [...fields.map((f) => record.values[f] as Value), created, updated];
    }
  }
  const written = await writeRows(db, rows(), {
    table: c.name,
    columns,
    onProgress: options.onWritten,
    exclusive: options.exclusive,
    onDirect: options.onDirect,
  });
  // The rows are committed and searchable (their triggers listed them pending, and pending
  // records are checked by the scan's predicate); indexing them makes their search fast.
  await indexLoaded(db, c.name, { onProgress: options.onIndexed });
  return written;
}

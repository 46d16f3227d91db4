// Reads the CSV that an export writes (src/handlers/export.ts, csvField) back into the bodies an
// NDJSON import takes: RFC 4180 records, a chunk of text at a time, typed by the collection's
// write schema. No I/O here: the import feeds it the file's text (lines.ts, utf8Text).
import type { OpenAPIV3 } from 'openapi-types';
import { isSetByService, pointer } from '../../src/spec';
import type { FieldError } from '../../src/problems';

export interface CsvCell {
  text: string;
  /** Written in quotes: the export quotes a cell it guarded against formulas (csvField). */
  quoted: boolean;
}

export interface CsvRow {
  /** The line of the file the record starts on (a quoted line break makes it span more). */
  line: number;
  cells: CsvCell[];
}

/** The file breaks RFC 4180 (field `record`), or its header names no field, at `line`. */
export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** A record runs on past the most bytes a record may have; `openQuote` is the line of a quoted field still open. */
export class CsvRecordTooLong extends Error {
  constructor(
    readonly line: number,
    readonly openQuote: number | undefined,
  ) {
    super(`the record of line ${line} is too long`);
  }
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;

const enum State {
  FieldStart,
  Unquoted,
  Quoted,
  /** A quote inside a quoted field: the field's end, or the first of a doubled quote. */
  QuoteInQuoted,
}

/**
 * An RFC 4180 reader fed text in pieces of any size: records end at CRLF, LF or a lone CR (as
 * the NDJSON import's lines do); inside quotes every character is kept as it is. A line that is
 * empty holds no record. Memory holds one record, which may not pass `maxRecordBytes` of UTF-8.
 */
export class CsvParser {
  private state = State.FieldStart;
  private cells: CsvCell[] = [];
  private text = '';
  private quotedAt = 0;
  private recordLine = 1;
  private recordBytes = 0;
  private skipLf = false;
  private previous = 0;
  /** The line the reader is on. */
  line = 1;

  constructor(private readonly maxRecordBytes = Infinity) {}

  private failure: Error | undefined;

  /**
   * The records that this piece of text completes. Where the text breaks the format, those before
   * come first (one of them may be the first bad record) and the next call throws.
   */
  push(piece: string): CsvRow[] {
    if (this.failure) throw this.failure;
    const rows: CsvRow[] = [];
    try {
      this.read(piece, rows);
    } catch (err) {
      if (!rows.length) throw err;
      this.failure = err as Error;
    }
    return rows;
  }

  private read(piece: string, rows: CsvRow[]): void {
    let start = 0;
    for (let i = 0; i < piece.length; i++) {
      const c = piece.charCodeAt(i);
      if (this.skipLf) {
        this.skipLf = false;
        // The LF of a CRLF that ended the last record.
        if (c === LF) {
          this.previous = c;
          continue;
        }
      }
      // UTF-8 length: a surrogate is half of a 4-byte character.
      this.recordBytes += c < 0x80 ? 1 : c < 0x800 || (c & 0xf800) === 0xd800 ? 2 : 3;
      if (this.recordBytes > this.maxRecordBytes) {
        throw new CsvRecordTooLong(this.recordLine, this.state === State.Quoted ? this.quotedAt : undefined);
      }
      switch (this.state) {
        case State.FieldStart:
          if (c === QUOTE) {
            this.state = State.Quoted;
            this.quotedAt = this.line;
            this.text = '';
            start = i + 1;
          } else if (c === COMMA) this.cells.push({ text: '', quoted: false });
          else if (c === CR || c === LF) this.endRecord(rows, { text: '', quoted: false }, c);
          else {
            this.state = State.Unquoted;
            this.text = '';
            start = i;
          }
          break;
        case State.Unquoted:
          if (c === COMMA) {
            this.cells.push({ text: this.text + piece.slice(start, i), quoted: false });
            this.state = State.FieldStart;
          } else if (c === CR || c === LF) this.endRecord(rows, { text: this.text + piece.slice(start, i), quoted: false }, c);
          else if (c === QUOTE) {
            throw new CsvSyntaxError(
              this.line,
              'record',
              'a quote inside a field that does not start with one (quote the field, and double its quotes)',
            );
          }
          break;
        case State.Quoted:
          if (c === QUOTE) {
            this.text += piece.slice(start, i);
            this.state = State.QuoteInQuoted;
          } else if (c === CR || (c === LF && this.previous !== CR)) this.line++;
          break;
        case State.QuoteInQuoted:
          if (c === QUOTE) {
            this.text += '"';
            start = i + 1;
            this.state = State.Quoted;
          } else if (c === COMMA) {
            this.cells.push({ text: this.text, quoted: true });
            this.state = State.FieldStart;
          } else if (c === CR || c === LF) this.endRecord(rows, { text: this.text, quoted: true }, c);
          else throw new CsvSyntaxError(this.line, 'record', this.afterQuoteMessage());
          break;
      }
      this.previous = c;
    }
    if (this.state === State.Unquoted || this.state === State.Quoted) this.text += piece.slice(start);
  }

  /** The last record, when the file ends without a line end. */
  end(): CsvRow[] {
    if (this.failure) throw this.failure;
    const rows: CsvRow[] = [];
    switch (this.state) {
      case State.Quoted:
        throw new CsvSyntaxError(this.quotedAt, 'record', 'a quoted field that starts on this line is never closed');
      case State.Unquoted:
      case State.QuoteInQuoted:
        this.endRecord(rows, { text: this.text, quoted: this.state === State.QuoteInQuoted }, 0);
        break;
      case State.FieldStart:
        if (this.cells.length) this.endRecord(rows, { text: '', quoted: false }, 0);
    }
    return rows;
  }

  /** A quoted field that ran over lines most likely holds a quote left open where it starts. */
  private afterQuoteMessage(): string {
    const opened = this.quotedAt < this.line ? ` opened on line ${this.quotedAt} (a quote left open there?)` : '';
    return `text after the closing quote of a field${opened}; a quote inside a field is written twice`;
  }

  private endRecord(rows: CsvRow[], last: CsvCell, lineEnd: number): void {
    const cells = this.cells;
    cells.push(last);
    if (cells.length > 1 || last.quoted || last.text !== '') rows.push({ line: this.recordLine, cells });
    this.cells = [];
    this.state = State.FieldStart;
    if (lineEnd) this.line++;
    this.skipLf = lineEnd === CR;
    this.recordLine = this.line;
    this.recordBytes = 0;
  }
}

/** What a column's cells are, from its property in the write schema. */
export interface ColumnType {
  type: string | undefined;
  nullable: boolean;
  setByService: boolean;
}

/** The write schema's properties (`PostWrite`: the client fields, `id` and the timestamps), in its order. */
export function columnTypes(spec: OpenAPIV3.Document, resource: string): Map<string, ColumnType> {
  const write = spec.components?.schemas?.[`${resource}Write`] as OpenAPIV3.SchemaObject;
  const out = new Map<string, ColumnType>();
  for (const [name, given] of Object.entries(write.properties ?? {})) {
    let p: object = given;
    while ('$ref' in p) p = pointer(spec, String(p.$ref)) as object;
    const schema = p as OpenAPIV3.SchemaObject & { type?: string | string[] };
    const types = ([] as (string | undefined)[]).concat(schema.type);
    out.set(name, {
      type: types.find((t) => t !== 'null'),
      nullable: schema.nullable === true || types.includes('null'),
      setByService: isSetByService(schema),
    });
  }
  return out;
}

/** A cell the export guarded against formulas: `'` then what a spreadsheet runs (csvField). */
const GUARDED = /^'+[=+\-@\t\r]/;
const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/**
 * A cell's value as the export had it (undefined: left out). An empty cell is null where the
 * field may be null (the export writes null so), the empty string for text, and left out
 * otherwise (a set-by-service field, a number), which takes the default as a JSON line would.
 * Text that is no number or boolean where one is due stays text, for the schema to refuse.
 */
export function cellValue(cell: CsvCell, column: ColumnType): unknown {
  const { text } = cell;
  if (text === '') return column.nullable ? null : column.type === 'string' && !column.setByService ? '' : undefined;
  switch (column.type) {
    case 'string':
      return cell.quoted && GUARDED.test(text) ? text.slice(1) : text;
    case 'integer':
    case 'number':
      return JSON_NUMBER.test(text) ? Number(text) : text;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    default:
      return text;
  }
}

export type Decoded = { ok: true; body: Record<string, unknown> } | { ok: false; errors: FieldError[] };

/**
 * From the header row, what turns each record into a body: the header names fields of the
 * write schema, each once (any order, any subset: a field left out takes its default).
 * Throws CsvSyntaxError for a header that does not.
 */
export function csvDecoder(columns: Map<string, ColumnType>, collection: string, header: CsvRow): (row: CsvRow) => Decoded {
  const names = header.cells.map((c) => c.text);
  names.forEach((name, i) => {
    if (!columns.has(name)) {
      const known = [...columns.keys()].join(', ');
      throw new CsvSyntaxError(header.line, name || `column ${i + 1}`, `is not a field of ${collection} (${known})`);
    }
    if (names.indexOf(name) !== i) throw new CsvSyntaxError(header.line, name, 'is named twice in the header');
  });
  const types = names.map((n) => columns.get(n)!);
  return (row) => {
    if (row.cells.length !== names.length) {
      const message = `has ${row.cells.length} fields where the header has ${names.length}`;
      return { ok: false, errors: [{ field: 'record', message }] };
    }
    const body: Record<string, unknown> = {};
    row.cells.forEach((cell, i) => {
      const value = cellValue(cell, types[i]);
      if (value !== undefined) body[names[i]] = value;
    });
    return { ok: true, body };
  };
}

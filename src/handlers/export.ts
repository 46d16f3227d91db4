import type { Request, Response } from 'express';
import { ConcurrencyLimiter } from '../lib/concurrency';

/** The export formats, by media type; NDJSON is the default. */
export type ExportFormat = 'ndjson' | 'csv';

const TYPES: Record<ExportFormat, string> = {
  ndjson: 'application/x-ndjson',
  csv: 'text/csv',
};

/** The format the client asks for (NDJSON for `*\/*` or no Accept), or undefined when it accepts neither. */
export function exportFormat(req: Request): ExportFormat | undefined {
  const best = req.accepts([TYPES.ndjson, TYPES.csv]);
  return best === TYPES.ndjson ? 'ndjson' : best === TYPES.csv ? 'csv' : undefined;
}

/** One NDJSON line: the record as JSON (JSON escapes every line break inside strings). */
export function ndjsonLine(record: Record<string, unknown>): string {
  return `${JSON.stringify(record)}\n`;
}

/**
 * Text that a spreadsheet would read as a formula (OWASP, "CSV Injection"): a cell starting with
 * `=`, `+`, `-`, `@`, a tab or a carriage return. Text that starts with `'` before one is guarded
 * too, so that dropping one `'` from every guarded cell gives the text back (ADR 0020).
 */
const FORMULA_START = /^'*[=+\-@\t\r]/;

/**
 * One RFC 4180 field: quoted when it holds a comma, a quote, CR or LF (quotes doubled); null is
 * an empty field; everything else as its text. A string that a spreadsheet would run as a formula
 * gets a leading `'` and quotes, as OWASP recommends; numbers and booleans are never strings
 * here, so they stay as they are (a negative price is still a number).
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string' && FORMULA_START.test(value)) return `"'${value.replace(/"/g, '""')}"`;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One RFC 4180 record (CRLF-terminated) of the columns' values. */
export function csvLine(columns: readonly string[], record: Record<string, unknown>): string {
  return `${columns.map((c) => csvField(record[c])).join(',')}\r\n`;
}

/**
 * Streams records as NDJSON or CSV with backpressure. The first batch is read before the status,
 * so a failure at the start is still a problem; a later one cuts the connection (no final chunk).
 * HEAD reads the first batch only.
 */
export async function streamExport(
  res: Response,
  format: ExportFormat,
  options: { name: string; columns: readonly string[]; records: (signal: AbortSignal) => AsyncIterable<Record<string, unknown>> },
): Promise<void> {
  // Past the limit an export waits for one to end; a 503 (Retry-After) only if none does in time.
  await exportLimiter.run(Date.now() + EXPORT_WAIT_MS, () => streamRecords(res, format, options));
}

/**
 * Exports at once per process. Each reads its snapshot on a database connection of its own
 * (walkSnapshot), held as long as its client reads: unbounded, they would use up the server's
 * connections, and the service's own pool with them.
 */
export const EXPORTS_AT_ONCE = 4;
const EXPORT_WAIT_MS = 10_000;
const exportLimiter = new ConcurrencyLimiter(() => EXPORTS_AT_ONCE);

async function streamRecords(
  res: Response,
  format: ExportFormat,
  options: { name: string; columns: readonly string[]; records: (signal: AbortSignal) => AsyncIterable<Record<string, unknown>> },
): Promise<void> {
  const gone = new AbortController();
  const onClose = () => gone.abort();
  res.once('close', onClose);
  const iterator = options.records(gone.signal)[Symbol.asyncIterator]();
  try {
    let next = await iterator.next();
    res.status(200);
    res.set('Content-Type', format === 'csv' ? `${TYPES.csv}; charset=utf-8; header=present` : `${TYPES.ndjson}; charset=utf-8`);
    res.set('Content-Disposition', `attachment; filename="${options.name}.${format === 'csv' ? 'csv' : 'ndjson'}"`);
    // HEAD: the headers GET would send, without walking every record for a body nobody gets.
    if (res.req.method === 'HEAD') return void res.end();
    if (format === 'csv') res.write(csvLine(options.columns, Object.fromEntries(options.columns.map((c) => [c, c]))));
    while (!next.done) {
      if (gone.signal.aborted) return;
      const line = format === 'csv' ? csvLine(options.columns, next.value) : ndjsonLine(next.value);
      if (!res.write(line) && !gone.signal.aborted) await drained(res, gone.signal);
      next = await iterator.next();
    }
    res.end();
  } catch (err) {
    // Cut the body short, then let the app's error handler log it (it sends nothing once headers went).
    if (res.headersSent) res.destroy();
    throw err;
  } finally {
    res.off('close', onClose);
    await iterator.return?.(undefined);
  }
}

/** Resolves on `drain` or when the client is gone, leaving no listener behind either way. */
function drained(res: Response, gone: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      gone.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    gone.addEventListener('abort', done, { once: true });
  });
}

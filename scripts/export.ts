// `npm run export -- --collection posts > posts.jsonl`: every record of a collection as NDJSON
// on stdout (write fields plus created_at/updated_at, one record a line), or as CSV, from the
// database that DATABASE_URL names (as for the service), in constant memory. A count goes to stderr.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../src/config';
import { ExportError, exportCollection, exportFormat, openForExport } from './export/index';
import { oneLine } from './lib/failure';

const USAGE = `usage: npm run -s export -- --collection <posts|products|books|users|tasks> [--format ndjson|csv] > file
  Writes every record of the collection in the database named by DATABASE_URL (default: the
  SQLite file) to stdout, oldest id first, as NDJSON (the default: one record a line, its write
  fields and created_at/updated_at) or as CSV (--format csv: what the HTTP export writes for
  Accept: text/csv, ids included). npm run import reads both.`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { collection: { type: 'string' }, format: { type: 'string' }, help: { type: 'boolean', default: false } },
  });
  if (values.help) return void console.log(USAGE);
  if (!values.collection) throw new ExportError(`--collection is required\n${USAGE}`);
  const format = exportFormat(values.format);
  const db = await openForExport(loadConfig().database, values.collection);
  try {
    const started = process.hrtime.bigint();
    const count = await exportCollection(db, values.collection, process.stdout, format);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    console.error(`exported ${count.toLocaleString('en')} ${values.collection} in ${seconds.toFixed(1)} s`);
  } finally {
    await db.destroy();
  }
}

// A failed stdout stops the export at its next record (exportCollection), which then closes the
// database: exiting here would leave SQLite's -wal and -shm files behind.
process.stdout.on('error', () => undefined);

main().catch((err: unknown) => {
  // A reader that went away (`| head`) ends the export quietly, as other Unix tools do.
  if ((err as NodeJS.ErrnoException).code === 'EPIPE') process.exit(0);
  const known = err instanceof ExportError || err instanceof ConfigError;
  console.error(`export failed: ${known ? err.message : oneLine(err)}`);
  process.exit(1);
});

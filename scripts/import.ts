// `npm run import -- --collection posts --file posts.jsonl`: loads NDJSON records (one create
// body per line, created_at/updated_at kept when given), or the CSV an export writes, into the
// configured database (DATABASE_URL, as for the service). Every record is checked first; one bad
// record stops the import with its line number and field, and nothing is written.
import { accessSync, constants } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../src/config';
import { ImportError, importFile, importFormat } from './import/index';
import { oneLine, openToWrite } from './lib/failure';

const USAGE = `usage: npm run import -- --collection <posts|products|books|users|tasks> --file <records.jsonl|records.csv>
         [--format ndjson|csv] [--exclusive]
  NDJSON: one JSON record per line, with the collection's write fields (and created_at/updated_at,
  kept when present). CSV: as an export writes it (Accept: text/csv): a header row naming the
  fields, then one record a row; an empty cell is null where the field may be null. An id is
  ignored in either. Into the database named by DATABASE_URL (default: the SQLite file).
  --format: csv or ndjson; by default .csv files are CSV, any other NDJSON.
  --exclusive (SQLite): nothing else uses the file (no service running); the import writes into
    it directly, not through the WAL (faster). A service that opens the file meanwhile fails to
    reach it until the import ends.`;

/** Before the database is touched: a mistyped path creates no SQLite file or folder. */
function readable(file: string): void {
  try {
    accessSync(file, constants.R_OK);
  } catch (err) {
    throw new ImportError(`--file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      collection: { type: 'string' },
      file: { type: 'string' },
      format: { type: 'string' },
      exclusive: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return void console.log(USAGE);
  if (!values.collection || !values.file) throw new ImportError(`--collection and --file are required\n${USAGE}`);
  const format = importFormat(values.format, values.file);
  readable(values.file);
  const { database, bodyLimit } = loadConfig();
  const db = await openToWrite(database, (message) => new ImportError(message));
  const started = Date.now();
  let indexedShown = 0;
  const line = (what: string, n: number) =>
    process.stderr.write(`${what} ${n.toLocaleString('en')} records, ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  try {
    const n = await importFile(db, values.collection, values.file, {
      onValidated: (k) => line('checked', k),
      onWritten: (k) => (k % 100_000 < 5000 ? line('written', k) : undefined),
      exclusive: values.exclusive,
      format,
      maxLineBytes: bodyLimit,
      onDirect: (direct) =>
        process.stderr.write(
          direct
            ? 'writing into the file directly, not through the WAL (--exclusive)\n'
            : 'another connection has the file open: writing through the WAL\n',
        ),
      // A line after the first batch, then each time the count passes a multiple of 100,000.
      onIndexed: (k) => {
        if (!indexedShown || Math.floor(k / 100_000) > Math.floor(indexedShown / 100_000)) line('indexed', k);
        indexedShown = k;
      },
    });
    console.log(`imported ${n.toLocaleString('en')} ${values.collection} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  const known = err instanceof ImportError || err instanceof ConfigError;
  console.error(`import failed: ${known ? err.message : oneLine(err)}`);
  process.exit(1);
});

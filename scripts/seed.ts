// `npm run seed -- --collection posts --count 1000000`: loads deterministic generated records
// into the configured database (DATABASE_URL, as for the service), after migrating it.
import { parseArgs } from 'node:util';
import { ConfigError, databaseWhere, loadConfig } from '../src/config';
import { oneLine, openToWrite } from './lib/failure';
import { COLLECTIONS, type CollectionName, DEFAULT_SEED, SeedError, seedCollection } from './seed/index';
import { progressBar } from './seed/progress';

const USAGE = `usage: npm run seed -- --collection <${COLLECTIONS.join('|')}> --count N [--seed N] [--reset] [--parallel N]
  Loads N generated records into the database named by DATABASE_URL (default: the SQLite file).
  --reset empties the collection first; without it, a collection that has records is left alone.`;

function wholeNumber(name: string, value: string | undefined, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value.replace(/_/g, '')) || Number(value.replace(/_/g, '')) < min) {
    throw new SeedError(`--${name} must be a whole number of at least ${min}, got "${value}"`);
  }
  return Number(value.replace(/_/g, ''));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      collection: { type: 'string' },
      count: { type: 'string' },
      seed: { type: 'string' },
      parallel: { type: 'string' },
      reset: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return void console.log(USAGE);
  const collection = values.collection as CollectionName;
  if (!COLLECTIONS.includes(collection)) throw new SeedError(`--collection must be one of ${COLLECTIONS.join(', ')}\n${USAGE}`);
  if (values.count === undefined) throw new SeedError(`--count is required\n${USAGE}`);
  const count = wholeNumber('count', values.count, 0);
  const seed = wholeNumber('seed', values.seed, DEFAULT_SEED);
  const parallel = wholeNumber('parallel', values.parallel, 2, 1);

  const config = loadConfig().database;
  const db = await openToWrite(config, (message) => new SeedError(message));
  const where = databaseWhere(config);
  try {
    const bar = progressBar(`${collection} → ${where}`, count);
    const started = process.hrtime.bigint();
    await seedCollection(db, collection, count, { seed, reset: values.reset, parallel, onProgress: (n) => bar.update(n) });
    bar.update(count);
    bar.finish();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    console.log(`seeded ${count.toLocaleString('en')} ${collection} (seed ${seed}) in ${seconds.toFixed(1)} s`);
  } finally {
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  const known = err instanceof SeedError || err instanceof ConfigError;
  console.error(`seed failed: ${known ? err.message : oneLine(err)}`);
  process.exit(1);
});

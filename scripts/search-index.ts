// `npm run search-index`: indexes every record the writes left pending (search stays exact
// meanwhile, only slower; each batch is one transaction). With --rebuild, makes each table's
// sets again from its records, choosing anew the words whose pairs have sets.
import { migrate } from '../src/schema';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { collectionNamed, collections } from '../src/collections';
import { ConfigError, databaseWhere, loadConfig } from '../src/config';
import { openDb } from '../src/db/connection';
import { maintainIndex } from '../src/search';
import { oneLine, unusable } from './lib/failure';

class SearchIndexError extends Error {}

const seconds = (since: number) => ((Date.now() - since) / 1000).toFixed(1);

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { collection: { type: 'string' }, rebuild: { type: 'boolean' } } });
  const names = values.collection
    ? [collectionNamed(values.collection, (message) => new ConfigError(message)).name]
    : collections.map((c) => c.name);
  const config = loadConfig().database;
  // Not opened: opening would create a file where DATABASE_URL names none.
  if (config.client === 'sqlite' && !existsSync(config.filename)) return void console.log('No SQLite file: nothing to do');
  const db = openDb(config);
  const started = Date.now();
  try {
    // A database that is not there is not created: it has no records to index.
    await migrate(db).catch((err: unknown) => {
      throw new SearchIndexError(unusable(err, databaseWhere(config)));
    });
    for (const name of names) {
      const done = await maintainIndex(db, name, {
        rebuild: values.rebuild,
        onProgress: (k) => {
          if (k % 50_000 < 20_000) process.stderr.write(`${name}: indexed ${k.toLocaleString('en')}\n`);
        },
      });
      const pairs = done.pairable === undefined ? '' : `, ${done.pairable} words with pairs`;
      console.log(`${name}: ${done.indexed.toLocaleString('en')} records indexed${pairs}, ${seconds(started)} s`);
    }
  } finally {
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  const known = err instanceof SearchIndexError || err instanceof ConfigError;
  console.error(`search-index failed: ${known ? err.message : oneLine(err)}`);
  process.exit(1);
});

// `npm run search-index`: on MySQL, indexes every record the word index lists as pending (search
// stays exact meanwhile, only slower; each batch is one transaction) and chooses the dense words;
// on SQLite, removes from the token vocabulary the tokens no record holds any more.
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
  const { values } = parseArgs({ options: { collection: { type: 'string' } } });
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
      const done = await maintainIndex(db, name, (k) => {
        if (k % 50_000 < 1000) process.stderr.write(`${name}: indexed ${k.toLocaleString('en')}\n`);
      });
      if (done.engine === 'sqlite')
        console.log(
          `${name}: ${done.tokensRemoved.toLocaleString('en')} tokens no record holds taken out of the vocabulary, ${seconds(started)} s`,
        );
      else
        console.log(
          `${name}: ${done.indexed.toLocaleString('en')} records indexed, ${done.filled} dense words listed, ${done.dropped} dropped, ${seconds(started)} s`,
        );
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

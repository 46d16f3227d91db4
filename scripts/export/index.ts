import { once } from 'node:events';
import { existsSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { type Collection, collectionNamed } from '../../src/collections';
import { type DatabaseConfig, databaseWhere } from '../../src/config';
import { type Db, DEFAULT_POOL, openDb } from '../../src/db/connection';
import { walkSnapshot } from '../../src/db/walk';
import { createSearch } from '../../src/search';
import { recordSerializer } from '../../src/handlers/serialize';
import { ndjsonLine } from '../../src/http/export';
import { loadSpec } from '../../src/spec';
import { notSetUp, unusable } from '../lib/failure';

export class ExportError extends Error {}

function collectionToExport(name: string): Collection {
  return collectionNamed(name, (message) => new ExportError(message));
}

/**
 * The database, opened to export the collection from, once it is known to hold its table. An
 * export only reads: where nothing was set up it says so, and creates nothing (openDb would
 * create a SQLite file, and its folder, for the service to migrate), nor changes a SQLite file
 * (an empty one stays empty: the service's openDb would make it a WAL database).
 */
export async function openForExport(config: DatabaseConfig, name: string): Promise<Db> {
  const { name: table } = collectionToExport(name);
  const where = databaseWhere(config);
  if (config.client === 'sqlite' && !existsSync(config.filename)) throw new ExportError(notSetUp(where));
  const db = openDb(config, DEFAULT_POOL, undefined, { readOnly: true });
  try {
    if (await db.schema.hasTable(table)) return db;
  } catch (err) {
    await db.destroy();
    throw new ExportError(unusable(err, where));
  }
  await db.destroy();
  throw new ExportError(notSetUp(where, `has no ${table} table`));
}

/**
 * Writes a collection to `out` as NDJSON, what `npm run import` reads: oldest id first, from one
 * read snapshot, waiting for `drain` so memory stays flat. Returns the number written.
 */
export async function exportCollection(db: Db, name: string, out: Writable): Promise<number> {
  const c = collectionToExport(name);
  const serialize = recordSerializer(loadSpec(), c);
  let written = 0;
  // No search terms: the engine's tuning plays no part.
  const walk = walkSnapshot(
    db,
    createSearch(),
    { table: c.name, searchFields: c.searchFields },
    { terms: [], filters: [], order: [{ column: 'id', desc: false }] },
  );
  for await (const row of walk) {
    // A reader gone (`| head`) fails the stream, which then takes no more writes nor drains:
    // stop here, so that the caller closes the database rather than waiting for ever.
    if (out.errored) throw out.errored;
    const { id: _id, ...record } = serialize(row) as Record<string, unknown>;
    if (!out.write(ndjsonLine(record))) await once(out, 'drain');
    written++;
  }
  return written;
}

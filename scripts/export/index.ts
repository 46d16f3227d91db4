import { walkSnapshot } from '../../src/handlers/pages';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { type Collection, collectionNamed } from '../../src/collections';
import { type DatabaseConfig, databaseWhere } from '../../src/config';
import { type Db, DEFAULT_POOL, openDb } from '../../src/db/connection';
import { createSearch } from '../../src/search';
import { recordSerializer, writeFields } from '../../src/handlers/serialize';
import { csvLine, ndjsonLine } from '../../src/handlers/export';
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

export type ExportFormat = 'ndjson' | 'csv';

/** `--format`: NDJSON when not given. */
export function exportFormat(flag: string | undefined): ExportFormat {
  const format = (flag ?? 'ndjson').toLowerCase();
  if (format === 'ndjson' || format === 'csv') return format;
  throw new ExportError(`--format must be csv or ndjson, not ${JSON.stringify(flag)}`);
}

/**
 * Writes a collection to `out`, in what `npm run import` reads: oldest id first, from one read
 * snapshot, waiting for `drain` so memory stays flat. NDJSON has the write fields and timestamps;
 * CSV is what `GET /api/<collection>/export/?ordering=id` answers `Accept: text/csv` (with ids,
 * which an import ignores). Returns the number written.
 */
export async function exportCollection(db: Db, name: string, out: Writable, format: ExportFormat = 'ndjson'): Promise<number> {
  const c = collectionToExport(name);
  const spec = loadSpec();
  const serialize = recordSerializer(spec, c);
  // The HTTP export's columns (src/handlers/records.ts): the record's fields in a JSON record's order.
  const columns = ['id', ...writeFields(spec, c.resource).map((f) => f.name), 'created_at', 'updated_at'];
  if (format === 'csv') out.write(csvLine(columns, Object.fromEntries(columns.map((k) => [k, k]))));
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
    const { id, ...record } = serialize(row) as Record<string, unknown>;
    const line = format === 'csv' ? csvLine(columns, { id, ...record }) : ndjsonLine(record);
    if (!out.write(line)) await once(out, 'drain');
    written++;
  }
  return written;
}

import { once } from 'node:events';
import { existsSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { type Collection, collectionNamed } from '../../src/collections';
import { type DatabaseConfig, databaseWhere } from '../../src/config';
import { type Db, openDb } from '../../src/db/connection';
import { classifyDbError } from '../../src/db/errors';
import { walkRecords } from '../../src/db/walk';
import { recordSerializer } from '../../src/handlers/serialize';
import { ndjsonLine } from '../../src/http/export';
import { loadSpec } from '../../src/spec';
import { reason } from '../lib/failure';

export class ExportError extends Error {}

function collectionToExport(name: string): Collection {
  return collectionNamed(name, (message) => new ExportError(message));
}

const SET_UP = 'check DATABASE_URL, or create it by starting the service or running npm run import or npm run seed';

/**
 * The database, opened to export the collection from, once it is known to hold its table. An
 * export only reads: where nothing was set up it says so, and creates nothing (openDb would
 * create a SQLite file, and its folder, for the service to migrate).
 */
export async function openForExport(config: DatabaseConfig, name: string): Promise<Db> {
  const { name: table } = collectionToExport(name);
  const where = databaseWhere(config);
  if (config.client === 'sqlite' && !existsSync(config.filename))
    throw new ExportError(`the database (${where}) does not exist; ${SET_UP}`);
  const db = openDb(config);
  try {
    if (await db.schema.hasTable(table)) return db;
  } catch (err) {
    await db.destroy();
    throw unreadable(err, where);
  }
  await db.destroy();
  throw new ExportError(`the database (${where}) has no ${table} table; ${SET_UP}`);
}

/** Why the database could not be read, in the words the service uses when it cannot start. */
function unreadable(err: unknown, where: string): ExportError {
  if ((err as { code?: unknown }).code === 'ER_BAD_DB_ERROR') return new ExportError(`the database (${where}) does not exist; ${SET_UP}`);
  const verb = classifyDbError(err, '', [])?.kind === 'unavailable' ? 'reach' : 'read';
  return new ExportError(`cannot ${verb} the database (${where}): ${reason(err)}`);
}

/**
 * Writes every record of a collection to `out` as NDJSON, one record a line: its write fields and
 * `created_at`/`updated_at` (what `npm run import` reads; the id is the importing database's).
 * Oldest id first, so that an import gives the records ids in the same order. A keyset walk in
 * batches, waiting for `drain`: memory stays flat whatever the size. Returns the number written.
 */
export async function exportCollection(db: Db, name: string, out: Writable): Promise<number> {
  const c = collectionToExport(name);
  const serialize = recordSerializer(loadSpec(), c);
  let written = 0;
  const walk = walkRecords(
    db,
    { table: c.name, searchFields: c.searchFields },
    { terms: [], filters: [], order: [{ column: 'id', desc: false }] },
  );
  for await (const row of walk) {
    const { id: _id, ...record } = serialize(row) as Record<string, unknown>;
    if (!out.write(ndjsonLine(record))) await once(out, 'drain');
    written++;
  }
  return written;
}

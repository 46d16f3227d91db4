import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { collections } from '../../src/collections';
import type { Db } from '../../src/db/connection';
import { walkRecords } from '../../src/db/walk';
import { recordSerializer } from '../../src/handlers/serialize';
import { ndjsonLine } from '../../src/http/export';
import { loadSpec } from '../../src/spec';

export class ExportError extends Error {}

/**
 * Writes every record of a collection to `out` as NDJSON, one record a line: its write fields and
 * `created_at`/`updated_at` (what `npm run import` reads; the id is the importing database's).
 * Oldest id first, so that an import gives the records ids in the same order. A keyset walk in
 * batches, waiting for `drain`: memory stays flat whatever the size. Returns the number written.
 */
export async function exportCollection(db: Db, name: string, out: Writable): Promise<number> {
  const c = collections.find((x) => x.name === name);
  if (!c) throw new ExportError(`--collection must be one of ${collections.map((x) => x.name).join(', ')}`);
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

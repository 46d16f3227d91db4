// A process that writes posts without pause (create, update, delete) through the service's
// database layer, with the service's background indexer, to be killed mid-write by
// tests/e2e/search/crash.test.ts (or to lose its server to a kill). Argument: the SQLite
// file, or a mysql:// URL.
import { parseDatabaseUrl } from '../../src/config';
import { openDb } from '../../src/db/connection';
import { keepIndex } from '../../src/search';
import { deleteRecord, insertRecord, updateRecord } from '../../src/db/records';
import { dbTimestamp } from '../../src/db/time';

const TEXTS = ['alpha ÉCOLE', 'bêta σοφός', 'gamma Straße', 'delta 🎉 party', 'epsilon école'];

async function main(): Promise<void> {
  const target = process.argv[2];
  const db = openDb(target.startsWith('mysql://') ? parseDatabaseUrl(target) : { client: 'sqlite', filename: target });
  // Batches indexed again and again, crashes and all.
  keepIndex(db, { sweepMs: 200, delayMs: 0 });
  let n = 0;
  process.stdout.write('ready\n');
  for (;;) {
    const now = dbTimestamp();
    const text = TEXTS[n % TEXTS.length];
    // A transaction of several writes, so that a kill can land between them.
    await db
      .transaction(async (trx) => {
        const { id } = await insertRecord(trx, 'posts', {
          title: `${text} ${n}`,
          content: `${TEXTS[(n + 1) % TEXTS.length]} body ${n}`,
          author: 'w',
          created_at: now,
          updated_at: now,
        });
        await updateRecord(trx, 'posts', Number(id) - 3, { content: `${TEXTS[(n + 2) % TEXTS.length]} changed ${n}` });
        if (n % 3 === 0) await deleteRecord(trx, 'posts', Number(id) - 7);
      })
      // The server going away (the MySQL test kills it): keep trying until this process is killed.
      .catch(() => new Promise((r) => setTimeout(r, 50)));
    n++;
  }
}

void main();

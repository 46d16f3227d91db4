// A process that writes posts without pause (create, PATCH-like update, delete), to be killed
// with SIGKILL mid-write by tests/db/searchIndex.crash.test.ts. Argument: the SQLite file.
import { openDb } from '../../src/db/connection';
import { dbTimestamp } from '../../src/db/time';

const TEXTS = ['alpha ÉCOLE', 'bêta σοφός', 'gamma Straße', 'delta 🎉 party', 'epsilon école'];

async function main(): Promise<void> {
  const db = openDb({ client: 'sqlite', filename: process.argv[2] });
  let n = 0;
  process.stdout.write('ready\n');
  for (;;) {
    const now = dbTimestamp();
    const text = TEXTS[n % TEXTS.length];
    // A transaction of several writes, so that a kill can land between them.
    await db.transaction(async (trx) => {
      const [id] = await trx('posts').insert({
        title: `${text} ${n}`,
        content: `${TEXTS[(n + 1) % TEXTS.length]} body ${n}`,
        author: 'w',
        created_at: now,
        updated_at: now,
      });
      await trx('posts')
        .where({ id: Number(id) - 3 })
        .update({ content: `${TEXTS[(n + 2) % TEXTS.length]} changed ${n}` });
      if (n % 3 === 0)
        await trx('posts')
          .where({ id: Number(id) - 7 })
          .delete();
    });
    n++;
  }
}

void main();

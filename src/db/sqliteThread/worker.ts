// The thread behind one query-only SQLite connection (index.ts): it opens the file as the
// service's connections are opened and runs each statement it is sent, answering its rows.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { registerSqliteFunctions } from '../sqliteFunctions';
import { keepPrepared } from '../prepared';
import type { Answer, Statement } from './messages';

const port = parentPort!;
const describe = (err: unknown) => {
  const { name, message, code } = err as { name?: string; message?: string; code?: string };
  return { name: String(name ?? 'Error'), message: String(message ?? err), code };
};

/** A Buffer crosses to another thread as a plain Uint8Array, which better-sqlite3 does not bind. */
function asBuffer(value: unknown): unknown {
  return value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value;
}

let db: Database.Database | undefined;
try {
  const { filename, functions } = workerData as { filename: string; functions: string[] };
  db = new Database(filename);
  db.pragma('query_only = ON');
  db.pragma('busy_timeout = 5000');
  keepPrepared(db);
  registerSqliteFunctions(db, functions);
  port.postMessage({ id: 0 } satisfies Answer);
} catch (err) {
  port.postMessage({ id: 0, error: describe(err) } satisfies Answer);
}

port.on('message', (message: Statement | 'close') => {
  if (message === 'close') {
    db?.close();
    port.close();
    return;
  }
  let answer: Answer;
  try {
    const statement = db!.prepare(message.sql);
    const bindings = message.bindings.map(asBuffer);
    if (statement.reader) answer = { id: message.id, rows: statement.all(bindings) as Record<string, unknown>[] };
    else answer = { id: message.id, changes: statement.run(bindings).changes };
  } catch (err) {
    answer = { id: message.id, error: describe(err) };
  }
  port.postMessage(answer);
});

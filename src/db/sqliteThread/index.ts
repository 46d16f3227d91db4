// A knex client for a query-only SQLite connection whose statements run on a worker thread of
// its own (worker.ts): a long statement holds that thread, never the process's event loop.
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Knex } from 'knex';
import { sqliteFunctionModules } from '../sqliteFunctions';
import type { Answer, Statement } from './messages';

const WORKER = join(__dirname, `worker${extname(__filename)}`);
// From TypeScript sources (tests, scripts run by tsx) the thread loads them through tsx.
const WORKER_ARGV = extname(__filename) === '.ts' ? ['--require', require.resolve('tsx/cjs')] : [];
/** How long a closing thread may take to end its statement before it is stopped. */
const CLOSE_MS = 1000;

/** One connection: its thread, and the statements sent to it that wait for their answer. */
export class ThreadConnection {
  private next = 1;
  private readonly waiting = new Map<number, { resolve(answer: Answer): void; reject(err: Error): void }>();
  private ended?: Error;
  private readonly exited: Promise<void>;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (answer: Answer) => {
      const waiter = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      waiter?.resolve(answer);
    });
    worker.on('error', (err) => this.end(err));
    this.exited = new Promise((resolve) =>
      worker.once('exit', (code) => {
        this.end(new Error(`the SQLite thread ended (exit code ${code})`));
        resolve();
      }),
    );
  }

  /** Opens `filename` on a new thread; rejects as opening the file would. */
  static async open(filename: string): Promise<ThreadConnection> {
    const conn = new ThreadConnection(
      new Worker(WORKER, { workerData: { filename, functions: sqliteFunctionModules() }, execArgv: WORKER_ARGV }),
    );
    try {
      await conn.answer(0);
    } catch (err) {
      await conn.close();
      throw err;
    }
    return conn;
  }

  get alive(): boolean {
    return !this.ended;
  }

  /** The statement's rows, or the number of rows it changed. */
  run(sql: string, bindings: unknown[]): Promise<Answer> {
    const id = this.next++;
    const answered = this.answer(id);
    if (!this.ended) this.worker.postMessage({ id, sql, bindings } satisfies Statement);
    return answered;
  }

  async close(): Promise<void> {
    if (!this.ended) this.worker.postMessage('close');
    const timer = setTimeout(() => void this.worker.terminate(), CLOSE_MS);
    await this.exited;
    clearTimeout(timer);
  }

  private answer(id: number): Promise<Answer> {
    if (this.ended) return Promise.reject(this.ended);
    return new Promise<Answer>((resolve, reject) => this.waiting.set(id, { resolve, reject })).then((answer) => {
      if (!answer.error) return answer;
      const { name, message, code } = answer.error;
      throw Object.assign(name === 'TypeError' ? new TypeError(message) : new Error(message), { name, code });
    });
  }

  /** A thread that stopped fails what waits on it as a lost connection does (fatal: a 503). */
  private end(cause: Error): void {
    if (this.ended) return;
    this.ended = Object.assign(new Error(`SQLite connection lost: ${cause.message}`), { fatal: true });
    for (const waiter of this.waiting.values()) waiter.reject(this.ended);
    this.waiting.clear();
  }
}

/** BLOBs cross from the thread as plain Uint8Arrays: made Buffers again, as knex's own client answers them. */
function blobsAsBuffers(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  for (const row of rows)
    for (const key in row) {
      const value = row[key];
      if (value instanceof Uint8Array && !Buffer.isBuffer(value)) row[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    }
  return rows;
}

interface QueryObject {
  sql: string;
  bindings?: unknown[];
  response?: unknown;
  context?: { changes: number };
}

// knex's own better-sqlite3 client, whose connection methods this one replaces; knex ships no type for it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const BetterSqlite3Client = require('knex/lib/dialects/better-sqlite3') as new (config: Knex.Config) => Knex.Client & {
  _formatBindings(bindings?: unknown[]): unknown[];
};

/** knex's better-sqlite3 client with each connection on a thread (ThreadConnection), query-only. */
export class ThreadedSqliteClient extends BetterSqlite3Client {
  async acquireRawConnection(): Promise<ThreadConnection> {
    return ThreadConnection.open((this.connectionSettings as { filename: string }).filename);
  }

  async destroyRawConnection(conn: ThreadConnection): Promise<void> {
    await conn.close();
  }

  validateConnection(conn: ThreadConnection): Promise<boolean> {
    return Promise.resolve(conn.alive);
  }

  async _query(conn: ThreadConnection, obj: QueryObject): Promise<QueryObject> {
    if (!obj.sql) throw new Error('The query is empty');
    const answer = await conn.run(obj.sql, this._formatBindings(obj.bindings));
    if (answer.rows) obj.response = blobsAsBuffers(answer.rows);
    else {
      obj.response = { changes: answer.changes ?? 0 };
      obj.context = { changes: answer.changes ?? 0 };
    }
    return obj;
  }
}
// Nothing stops a SQLite statement once it runs (better-sqlite3 has no interrupt): at a timeout
// knex would answer 503 and drop the connection while the thread ran on, its work wasted, and
// start another thread beside it. withQueryTimeout gives this client's statements none (on the
// prototype, as knex sets its own: a transaction's client copies the prototype, not fields).
Object.assign(ThreadedSqliteClient.prototype, { statementsRunToEnd: true });

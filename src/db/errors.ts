// Sorts database errors into what the HTTP layer answers differently: a broken uniqueness rule
// (409) and an unreachable or busy database (503, with Retry-After). Everything else is unexpected (500).

export type DbFailure = { kind: 'unique'; field: string } | { kind: 'unavailable'; timeout: boolean };

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ER_QUERY_INTERRUPTED',
  'ER_LOCK_WAIT_TIMEOUT',
  // Still failing after the retries (src/db/retry.ts): a write conflict between cluster nodes (or
  // an InnoDB deadlock), a Galera node not ready for clients, a commit the cluster refused.
  'ER_LOCK_DEADLOCK',
  'ER_UNKNOWN_COM_ERROR',
  'ER_ERROR_DURING_COMMIT',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
]);

// SQLite's file cannot be opened, read or written, or its disk is full: a fault of the storage,
// as a lost connection is of a server. better-sqlite3 throws a plain TypeError, with no code,
// when the file's folder is gone.
const SQLITE_UNAVAILABLE = /^SQLITE_(CANTOPEN|IOERR|FULL)/;
const SQLITE_FOLDER_GONE = 'Cannot open database because the directory does not exist';

export function classifyDbError(err: unknown, table: string, uniqueFields: readonly string[]): DbFailure | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const { code, name, message, fatal } = err as { code?: string; name?: string; message?: string; fatal?: boolean };
  if (code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE') {
    // Only the end of the message names the key: the rest quotes the SQL and the duplicate value,
    // which may contain anything. MySQL names the index (<table>_<column>_unique), SQLite the column.
    const text = String((err as { sqlMessage?: string }).sqlMessage ?? message);
    const index = /for key '(?:[^']*\.)?([^'.]+)'$/.exec(text)?.[1];
    const columns = /UNIQUE constraint failed: ([\w.]+(?:, [\w.]+)*)$/.exec(text)?.[1].split(', ');
    const field = uniqueFields.find((f) => index === `${table}_${f}_unique` || columns?.includes(`${table}.${f}`));
    if (field) return { kind: 'unique', field };
    return undefined;
  }
  // A statement past the query timeout (knex cancels it), or no connection within the acquire timeout.
  if (name === 'KnexTimeoutError') return { kind: 'unavailable', timeout: true };
  // mysql2 marks errors that end the connection as fatal, whatever their code.
  if ((code && UNAVAILABLE_CODES.has(code)) || fatal === true) return { kind: 'unavailable', timeout: false };
  if ((code && SQLITE_UNAVAILABLE.test(code)) || (name === 'TypeError' && message === SQLITE_FOLDER_GONE)) {
    return { kind: 'unavailable', timeout: false };
  }
  return undefined;
}

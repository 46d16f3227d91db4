// Sorts database errors into what the HTTP layer answers differently: a broken uniqueness rule
// (409) and an unreachable database (503). Everything else is unexpected (500).

export type DbFailure = { kind: 'unique'; field: string } | { kind: 'unavailable' };

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE',
  'PROTOCOL_CONNECTION_LOST', 'PROTOCOL_SEQUENCE_TIMEOUT', 'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN', 'ER_LOCK_WAIT_TIMEOUT', 'SQLITE_BUSY', 'SQLITE_LOCKED',
]);

export function classifyDbError(err: unknown, table: string, uniqueFields: readonly string[]): DbFailure | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const { code, name, message } = err as { code?: string; name?: string; message?: string };
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
  if ((code && UNAVAILABLE_CODES.has(code)) || name === 'KnexTimeoutError') return { kind: 'unavailable' };
  return undefined;
}

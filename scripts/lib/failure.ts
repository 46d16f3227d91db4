// How the commands that move records (import, export, seed, search-index) report a failure: one
// line on stderr. A stack trace tells someone moving records nothing they can act on, and buries
// the line that does.
import { type DatabaseConfig, databaseWhere } from '../../src/config';
import { type Db, ensureMysqlDatabase, openDb } from '../../src/db/connection';
import { classifyDbError } from '../../src/db/errors';

/** An unexpected error: its name and message, and its code when the message does not say it. */
export function oneLine(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // A failed connection to several addresses (an AggregateError) may have no message, only a code.
  const text = flat(err.message ? `${err.name}: ${err.message}` : err.name);
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text;
}

/** What went wrong, after a sentence that names the database: the message on one line, or oneLine when there is none. */
export function reason(err: unknown): string {
  const message = (err as Error | undefined)?.message;
  return message ? flat(message) : oneLine(err);
}

/** A multi-line message (a driver's, an AggregateError's) as one line of stderr. */
function flat(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

const SET_UP = 'check DATABASE_URL, or create it by starting the service or running npm run import or npm run seed';

/** The database that a command only reads or fills in was never set up. */
export function notSetUp(where: string, what = 'does not exist'): string {
  return `the database (${where}) ${what}; ${SET_UP}`;
}

/** Why a database that the command does not create could not be used, in the words the service uses when it cannot start. */
export function unusable(err: unknown, where: string): string {
  if ((err as { code?: unknown }).code === 'ER_BAD_DB_ERROR') return notSetUp(where);
  const verb = classifyDbError(err, '', [])?.kind === 'unavailable' ? 'reach' : 'read';
  return `cannot ${verb} the database (${where}): ${reason(err)}`;
}

/**
 * The database for a command that writes records (import, seed), created if missing: MySQL's
 * here, SQLite's file as it is opened (the command migrates it). A failure is `fail`'s error,
 * whose message names the database.
 */
export async function openToWrite(config: DatabaseConfig, fail: (message: string) => Error): Promise<Db> {
  const where = databaseWhere(config);
  await ensureMysqlDatabase(config).catch((err: unknown) => {
    throw fail(`cannot reach the database (${where}): ${reason(err)}`);
  });
  try {
    return openDb(config);
  } catch (err) {
    // SQLite: its folder could not be made (a file of that name, no permission).
    throw fail(`cannot open the database (${where}): ${reason(err)}`);
  }
}

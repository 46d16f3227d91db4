// A lock between service instances that works on a Galera cluster, where GET_LOCK does not: a
// lease row claimed by INSERT, renewed by its holder, taken over once expired.
// See docs/adr/0007-galera-leases.md.
import { randomBytes } from 'node:crypto';
import type { Db } from './connection';

const TABLE = 'migration_lease';
const LEASE_SECONDS = 30;
const RENEW_MS = 5000;
const WAIT_SECONDS = 120;

export interface LeaseOptions {
  name?: string;
  leaseSeconds?: number;
  renewMs?: number;
  waitSeconds?: number;
}

/** Runs `work` while holding the lease `name`; waits up to `waitSeconds` for another holder. */
export async function withMigrationLease<T>(db: Db, work: () => Promise<T>, options: LeaseOptions = {}): Promise<T> {
  const name = options.name ?? 'migrations';
  const lease = options.leaseSeconds ?? LEASE_SECONDS;
  const holder = `${process.pid}-${randomBytes(8).toString('hex')}`;
  await ensureTable(db);
  const deadline = Date.now() + (options.waitSeconds ?? WAIT_SECONDS) * 1000;
  while (!(await tryTake(db, name, holder, lease))) {
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${options.waitSeconds ?? WAIT_SECONDS}s waiting for another instance's migrations (lease "${name}")`,
      );
    await new Promise((r) => setTimeout(r, 200 + Math.random() * 300));
  }
  let lost: Error | undefined;
  const renew = setInterval(() => {
    db(TABLE)
      .where({ name, holder })
      .update({ expires_at: db.raw('NOW(3) + INTERVAL ? SECOND', [lease]) })
      .then((n) => {
        if (!n) lost = new Error(`the lease "${name}" was taken over while this instance held it`);
      })
      .catch(() => {}); // a failed renewal is retried at the next tick; the lease outlasts a few
  }, options.renewMs ?? RENEW_MS);
  try {
    const result = await work();
    if (lost) throw lost;
    return result;
  } finally {
    clearInterval(renew);
    await db(TABLE)
      .where({ name, holder })
      .delete()
      .catch(() => {});
  }
}

async function ensureTable(db: Db): Promise<void> {
  // IF NOT EXISTS: instances starting together all run it; DDL replicates to every node (TOI).
  await db.raw(
    `CREATE TABLE IF NOT EXISTS ${TABLE} (name VARCHAR(64) NOT NULL PRIMARY KEY, holder VARCHAR(64) NOT NULL, ` +
      'expires_at DATETIME(3) NOT NULL) ENGINE=InnoDB',
  );
}

/** True when this holder now has the lease: a fresh insert, or the takeover of an expired one. */
async function tryTake(db: Db, name: string, holder: string, lease: number): Promise<boolean> {
  try {
    await db(TABLE).insert({ name, holder, expires_at: db.raw('NOW(3) + INTERVAL ? SECOND', [lease]) });
    return true;
  } catch (err) {
    if (!isContention(err)) throw err;
  }
  try {
    const taken = await db(TABLE)
      .where({ name })
      .where('expires_at', '<', db.raw('NOW(3)'))
      .update({ holder, expires_at: db.raw('NOW(3) + INTERVAL ? SECOND', [lease]) });
    return taken === 1;
  } catch (err) {
    if (isContention(err)) return false;
    throw err;
  }
}

/** Another instance holds the row or got there first (a certification conflict between nodes). */
function isContention(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'ER_DUP_ENTRY' || code === 'ER_LOCK_DEADLOCK' || code === 'ER_LOCK_WAIT_TIMEOUT';
}

import type { Db } from './connection';

const cache = new WeakMap<Db, Map<string, Promise<string>>>();

/** A secret that migration 003 made for this database, read once per pool. */
export function getSecret(db: Db, name: string): Promise<string> {
  let secrets = cache.get(db);
  if (!secrets) cache.set(db, (secrets = new Map<string, Promise<string>>()));
  let secret = secrets.get(name);
  if (!secret) {
    secret = db('service_secrets')
      .where({ name })
      .first('value')
      .then((row: { value: string } | undefined) => {
        if (!row) throw new Error(`secret ${name} is missing: have the migrations run?`);
        return row.value;
      });
    // A failed read (database down) is not remembered.
    secret.catch(() => secrets.delete(name));
    secrets.set(name, secret);
  }
  return secret;
}

import type { DatabaseConfig } from './config';
import type { Db, DbLog } from './db/connection';
import {
  migrate as migrateParts,
  migrateDatabase as migrateDatabaseParts,
  migrationNames,
  misnumberedMigration as misnumbered,
  migrationSource as sourceOf,
} from './db/migrations';
import { searchSchema } from './search';

// The database's schema: the records' own migrations (src/db/migrations.ts) and search's index
// (src/search/schema.ts), which src/db runs without knowing what search is.

const parts = searchSchema.schemaParts;

/** Brings a database up to date (on a pool of its own); see src/db/migrations.ts. */
export function migrateDatabase(config: DatabaseConfig, log?: DbLog): Promise<void> {
  return migrateDatabaseParts(config, parts, log);
}

/** Brings the database behind `db` up to date. */
export function migrate(db: Db): Promise<void> {
  return migrateParts(db, parts);
}

/** Every migration as knex reads them, for tests that step one back (`migrate.down`). */
export const migrationSource = sourceOf(parts);

/** Why the migrations' names are wrong (a number used twice, search's included), or undefined. */
export function misnumberedMigration(): string | undefined {
  return misnumbered(migrationNames(parts));
}

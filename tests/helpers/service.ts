import type { DatabaseConfig } from '../../src/config';
import * as processes from '../../scripts/lib/service-process';

export type { RunningService, ServiceProcess } from '../../scripts/lib/service-process';

/**
 * The service in a process of its own, with only the environment given here (plus PATH and
 * HOME), so that a developer's own variables cannot change what a test sees. `source` (the
 * default) runs src/main.ts through tsx, no build needed; `built` runs dist/main.js, as
 * `npm start` does (`npm test` builds it first; alone, run `npm run build`); a path runs that
 * script instead (a test's own entry).
 */
export function spawnService(env: Record<string, string>, entry: processes.Entry = 'source'): processes.ServiceProcess {
  return processes.spawnService({ entry, env: { ...processes.minimalEnv(), ...env } });
}

/** Starts the service on a free port and waits for its `listening` line (its last at start-up). */
export function startService(
  env: Record<string, string>,
  timeoutMs = 60000,
  entry: 'source' | 'built' = 'source',
): Promise<processes.RunningService> {
  return processes.startService({ entry, env: { ...processes.minimalEnv(), ...env } }, timeoutMs);
}

/** DATABASE_URL for a test database config. */
export function databaseUrl(config: DatabaseConfig): string {
  if (config.client === 'sqlite') return `sqlite:${config.filename}`;
  const auth = `${encodeURIComponent(config.user)}${config.password ? `:${encodeURIComponent(config.password)}` : ''}`;
  return `mysql://${auth}@${config.host}:${config.port}/${config.database}`;
}

// Configuration from the environment. A bad value is a ConfigError, which main.ts prints as one
// line and exits 1 with; nothing here touches the network.
export class ConfigError extends Error {}

export type DatabaseConfig =
  | { client: 'mysql'; host: string; port: number; user: string; password: string; database: string }
  | { client: 'sqlite'; filename: string };

export interface Config {
  port: number;
  host: string;
  database: DatabaseConfig;
  bodyLimit: number;
}

export const DEFAULT_SQLITE_FILE = './data/records.sqlite3';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: parseInteger('PORT', env.PORT ?? '3000', 0, 65535),
    host: env.HOST || '127.0.0.1',
    database: parseDatabaseUrl(env.DATABASE_URL),
    bodyLimit: parseSize('BODY_LIMIT', env.BODY_LIMIT ?? '1mb'),
  };
}

export function parseDatabaseUrl(url: string | undefined): DatabaseConfig {
  if (!url) return { client: 'sqlite', filename: DEFAULT_SQLITE_FILE };
  if (/^sqlite:/i.test(url)) {
    // sqlite:relative/path, sqlite:/absolute/path and sqlite:///absolute/path all name a file.
    const filename = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (!filename) throw new ConfigError('DATABASE_URL: sqlite: needs a file name, e.g. sqlite:./data/records.sqlite3');
    return { client: 'sqlite', filename };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('DATABASE_URL is not a URL; expected mysql://user:pass@host:port/database or sqlite:path');
  }
  if (parsed.protocol !== 'mysql:') {
    throw new ConfigError(`DATABASE_URL: unknown scheme "${parsed.protocol.replace(/:$/, '')}"; use mysql:// or sqlite:`);
  }
  const decode = (part: string, what: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      throw new ConfigError(`DATABASE_URL: the ${what} is not valid percent-encoding (write % as %25)`);
    }
  };
  const database = decode(parsed.pathname.replace(/^\//, ''), 'database name');
  if (!database || database.includes('/')) {
    throw new ConfigError('DATABASE_URL must name one database, e.g. mysql://root@127.0.0.1:3306/records');
  }
  return {
    client: 'mysql',
    // An IPv6 address comes bracketed in a URL ([::1]); the driver wants it bare.
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1',
    port: parsed.port ? parseInteger('DATABASE_URL port', parsed.port, 1, 65535) : 3306,
    user: decode(parsed.username || 'root', 'user name'),
    password: decode(parsed.password, 'password'),
    database,
  };
}

function parseInteger(name: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value.trim())) throw new ConfigError(`${name} must be a whole number, got "${value}"`);
  const n = Number(value);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

function parseSize(name: string, value: string): number {
  const m = /^\s*(\d+)\s*(b|kb|mb|gb)?\s*$/i.exec(value);
  if (!m) throw new ConfigError(`${name} must be a size such as 1048576, 512kb or 1mb, got "${value}"`);
  const bytes = Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()];
  if (bytes < 1) throw new ConfigError(`${name} must be at least 1 byte`);
  return bytes;
}

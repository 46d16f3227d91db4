// Configuration from the environment. A bad value is a ConfigError, which main.ts prints as one
// line and exits 1 with; nothing here touches the network (API_TOKENS_FILE is read).
import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { JSONWebKeySet } from 'jose';
import type { JwtOptions } from './auth/jwt';
import { parseTokensFile, type TokensFile } from './auth/tokensFile';
import { collections } from './collections';

export class ConfigError extends Error {}

export type DatabaseConfig =
  | {
      client: 'mysql';
      host: string;
      port: number;
      user: string;
      password: string;
      database: string;
      /**
       * Every node of a cluster (mysql://u@h1:3306,h2:3306/db), present only when the URL names
       * more than one; `host`/`port` are the first. New connections go to the nodes in turn.
       */
      hosts?: DatabaseHost[];
    }
  | { client: 'sqlite'; filename: string };

export interface DatabaseHost {
  host: string;
  port: number;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  port: number;
  host: string;
  database: DatabaseConfig;
  pool: PoolConfig;
  /** On MySQL, how many of a search's statements that visit every match run at once in a process (src/search/limiter.ts). */
  searchTurns: number;
  bodyLimit: number;
  logLevel: LogLevel;
  /** Bearer tokens that /api/ requires; empty: the API is open. */
  apiTokens: string[];
  /** TOKENS_FILE: named tokens with scopes, as hashes; undefined: none. */
  tokensFile: { path: string; file: TokensFile } | undefined;
  /** JWT bearer tokens verified with a configured key; undefined: JWTs are not accepted. */
  jwt: JwtOptions | undefined;
  /** Origins that browsers may call the API from; empty: no CORS headers at all. */
  corsOrigins: string[];
  /** Requests a minute per client address on /api/; undefined: no limit. */
  rateLimitPerMinute: number | undefined;
  /** Requests a minute per token (by its name) on /api/; undefined: no limit. */
  tokenRateLimitPerMinute: number | undefined;
  /**
   * Where the rate limit counts when several hosts share one quota (REDIS_URL); undefined: in
   * this process (or the primary, with workers).
   */
  redis: RedisConfig | undefined;
  /** The start of the rate limit's Redis keys: instances whose prefix is the same share a quota. */
  rateLimitPrefix: string;
  /** PUBLIC_URL's origin, which every absolute link starts with; undefined: links follow allowed Hosts. */
  publicUrl: string | undefined;
  /** ALLOWED_HOSTS: Host values links may repeat besides loopback names, lower case. */
  allowedHosts: string[];
  /** Proxy hops in front of the service whose X-Forwarded-For is believed (0: none). */
  trustProxy: number;
  shutdownTimeoutMs: number;
  /** Worker processes (node:cluster) that serve requests; 1: the service is one process. */
  workers: number;
}

export interface PoolConfig {
  /** Largest number of open database connections (SQLite always uses one). */
  size: number;
  /** A statement still running after this long is cancelled and answered with 503. */
  queryTimeoutMs: number;
  /** On Galera, the session's wsrep_sync_wait (1: reads see every write committed before them). */
  wsrepSyncWait?: number;
}

export interface RedisConfig {
  /** As given, credentials included: only for the client. */
  url: string;
  /** The URL without user name or password, for logs. */
  where: string;
}

/** With no DATABASE_URL: see docs/adr/0004-sqlite-embedded-default.md. */
export const DEFAULT_SQLITE_FILE = './data/records.sqlite3';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const database = parseDatabaseUrl(env.DATABASE_URL);
  return {
    port: parseInteger('PORT', env.PORT || '3000', 0, 65535),
    host: env.HOST || '127.0.0.1',
    database,
    pool: {
      size: parseInteger('DB_POOL_SIZE', env.DB_POOL_SIZE || '10', 1, 1000),
      queryTimeoutMs: parseInteger('DB_QUERY_TIMEOUT_MS', env.DB_QUERY_TIMEOUT_MS || '5000', 100, 3_600_000),
      wsrepSyncWait: parseInteger('DB_WSREP_SYNC_WAIT', env.DB_WSREP_SYNC_WAIT || '1', 0, 15),
    },
    searchTurns: parseInteger('DB_SEARCH_TURNS', env.DB_SEARCH_TURNS || '1', 1, 1000),
    bodyLimit: parseSize('BODY_LIMIT', env.BODY_LIMIT || '1mb'),
    logLevel: parseLogLevel(env.LOG_LEVEL || 'info'),
    apiTokens: parseTokens(env),
    tokensFile: parseTokensFileVar(env.TOKENS_FILE),
    jwt: parseJwt(env),
    corsOrigins: parseOrigins(env.CORS_ORIGINS ?? ''),
    rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE
      ? parseInteger('RATE_LIMIT_PER_MINUTE', env.RATE_LIMIT_PER_MINUTE, 1, 1_000_000)
      : undefined,
    tokenRateLimitPerMinute: env.RATE_LIMIT_PER_TOKEN_PER_MINUTE
      ? parseInteger('RATE_LIMIT_PER_TOKEN_PER_MINUTE', env.RATE_LIMIT_PER_TOKEN_PER_MINUTE, 1, 1_000_000)
      : undefined,
    redis: parseRedisUrl(env.REDIS_URL),
    rateLimitPrefix: parseRateLimitPrefix(env.RATE_LIMIT_PREFIX, database),
    publicUrl: parsePublicUrl(env.PUBLIC_URL),
    allowedHosts: parseAllowedHosts(env.ALLOWED_HOSTS ?? ''),
    trustProxy: parseInteger('TRUST_PROXY', env.TRUST_PROXY || '0', 0, 10),
    shutdownTimeoutMs: parseInteger('SHUTDOWN_TIMEOUT_MS', env.SHUTDOWN_TIMEOUT_MS || '10000', 100, 3_600_000),
    workers: parseInteger('WEB_CONCURRENCY', env.WEB_CONCURRENCY || String(availableParallelism()), 1, 256),
  };
}

/** `https://api.example.com` (scheme, host and port only): the origin links are built on. */
function parsePublicUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`PUBLIC_URL: "${value}" is not a URL such as https://api.example.com`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.username || url.password || url.pathname !== '/' || url.search || url.hash)
    throw new ConfigError(
      `PUBLIC_URL: "${value}" must be an http(s) origin such as https://api.example.com (no path, query or credentials)`,
    );
  return url.origin;
}

/** `api.example.com, api.example.com:8443`: Host values that links may repeat. */
function parseAllowedHosts(value: string): string[] {
  return value
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean)
    .map((h) => {
      if (!/^[a-z0-9.\-_~]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/.test(h))
        throw new ConfigError(`ALLOWED_HOSTS: "${h}" is not a host name, optionally with :port`);
      return h;
    });
}

function parseLogLevel(value: string): LogLevel {
  const level = value.trim().toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`);
  }
  return level as LogLevel;
}

// RFC 6750's b64token; short tokens are refused because they can be guessed.
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const MIN_TOKEN_LENGTH = 16;

/** API_TOKENS (comma-separated) or API_TOKENS_FILE (one a line, or comma-separated). Never echoes a token. */
function parseTokens(env: NodeJS.ProcessEnv): string[] {
  if (env.API_TOKENS && env.API_TOKENS_FILE) throw new ConfigError('set API_TOKENS or API_TOKENS_FILE, not both');
  let source = 'API_TOKENS';
  let text = env.API_TOKENS ?? '';
  if (env.API_TOKENS_FILE) {
    source = 'API_TOKENS_FILE';
    try {
      text = readFileSync(env.API_TOKENS_FILE, 'utf8');
    } catch (err) {
      throw new ConfigError(`API_TOKENS_FILE: cannot read ${env.API_TOKENS_FILE} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  const tokens = text
    .split(/[,\r\n]+/)
    .map((t) => t.trim())
    .filter(Boolean);
  if ((env.API_TOKENS || env.API_TOKENS_FILE) && !tokens.length) throw new ConfigError(`${source} is set but holds no token`);
  tokens.forEach((t, i) => {
    if (!TOKEN.test(t)) throw new ConfigError(`${source}: token ${i + 1} has characters a bearer token cannot have`);
    if (t.length < MIN_TOKEN_LENGTH) throw new ConfigError(`${source}: token ${i + 1} is shorter than ${MIN_TOKEN_LENGTH} characters`);
  });
  return tokens;
}

function readConfigFile(name: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${name}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** TOKENS_FILE, as `npm run token -- create` writes it. */
function parseTokensFileVar(path: string | undefined): Config['tokensFile'] {
  if (!path) return undefined;
  try {
    return {
      path,
      file: parseTokensFile(
        readConfigFile('TOKENS_FILE', path),
        collections.map((c) => c.name),
      ),
    };
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`TOKENS_FILE ${path}: ${(err as Error).message}`);
  }
}

const JWT_KEY_TYPES = new Set(['rsa', 'ec', 'ed25519']);

/**
 * JWT_PUBLIC_KEY_FILE (PEM) or JWT_JWKS_FILE (a local JSON Web Key Set), with JWT_ISSUER and
 * JWT_AUDIENCE, which are required: a token minted for another service must not pass here.
 */
function parseJwt(env: NodeJS.ProcessEnv): JwtOptions | undefined {
  const { JWT_PUBLIC_KEY_FILE: pemFile, JWT_JWKS_FILE: jwksFile } = env;
  if (!pemFile && !jwksFile) {
    const stray = ['JWT_ISSUER', 'JWT_AUDIENCE', 'JWT_SCOPES_CLAIM', 'JWT_CLOCK_SKEW_SECONDS'].find((n) => env[n]);
    if (stray) throw new ConfigError(`${stray} is set but neither JWT_PUBLIC_KEY_FILE nor JWT_JWKS_FILE is`);
    return undefined;
  }
  if (pemFile && jwksFile) throw new ConfigError('set JWT_PUBLIC_KEY_FILE or JWT_JWKS_FILE, not both');
  if (!env.JWT_ISSUER) throw new ConfigError('JWT_ISSUER is required with JWT_PUBLIC_KEY_FILE or JWT_JWKS_FILE');
  if (!env.JWT_AUDIENCE) throw new ConfigError('JWT_AUDIENCE is required with JWT_PUBLIC_KEY_FILE or JWT_JWKS_FILE');
  const claim = env.JWT_SCOPES_CLAIM || 'scope';
  if (!/^[\x21-\x7e]{1,100}$/.test(claim)) throw new ConfigError('JWT_SCOPES_CLAIM must be a claim name such as scope or scp');
  let key: JwtOptions['key'];
  if (pemFile) {
    const text = readConfigFile('JWT_PUBLIC_KEY_FILE', pemFile);
    let publicKey;
    try {
      publicKey = createPublicKey(text);
    } catch {
      throw new ConfigError(`JWT_PUBLIC_KEY_FILE: ${pemFile} holds no PEM public key`);
    }
    if (!JWT_KEY_TYPES.has(publicKey.asymmetricKeyType ?? ''))
      throw new ConfigError(`JWT_PUBLIC_KEY_FILE: a ${publicKey.asymmetricKeyType} key; use RSA (RS256), P-256 (ES256) or Ed25519 (EdDSA)`);
    key = { publicKey };
  } else {
    let jwks: { keys?: unknown };
    try {
      jwks = JSON.parse(readConfigFile('JWT_JWKS_FILE', jwksFile!)) as { keys?: unknown };
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      throw new ConfigError(`JWT_JWKS_FILE: ${jwksFile} is not JSON`);
    }
    if (!Array.isArray(jwks.keys) || !jwks.keys.length)
      throw new ConfigError(`JWT_JWKS_FILE: ${jwksFile} must be {"keys": [...]} with a key`);
    for (const k of jwks.keys as Record<string, unknown>[]) {
      if (!['RSA', 'EC', 'OKP'].includes(String(k?.kty)))
        throw new ConfigError(`JWT_JWKS_FILE: key type ${String(k?.kty)}; use RSA, EC or OKP public keys`);
      // A private key here would mean the file leaked it; a verifier needs only the public half.
      if ('d' in k) throw new ConfigError('JWT_JWKS_FILE: holds a private key; keep only the public keys');
    }
    key = { jwks: jwks as JSONWebKeySet };
  }
  return {
    key,
    issuer: env.JWT_ISSUER,
    audience: env.JWT_AUDIENCE,
    scopesClaim: claim,
    clockSkewSeconds: parseInteger('JWT_CLOCK_SKEW_SECONDS', env.JWT_CLOCK_SKEW_SECONDS || '30', 0, 300),
  };
}

/** `https://app.example.com, http://localhost:5173`, or `*` for any origin. */
export function parseOrigins(value: string): string[] {
  const items = value
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  if (items.includes('*')) {
    if (items.length > 1) throw new ConfigError('CORS_ORIGINS: "*" allows every origin and cannot be combined with others');
    return ['*'];
  }
  return items.map((item) => {
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      throw new ConfigError(`CORS_ORIGINS: "${item}" is not an origin such as https://app.example.com`);
    }
    if (!/^https?:$/.test(url.protocol) || url.origin !== item.replace(/\/$/, '')) {
      throw new ConfigError(`CORS_ORIGINS: "${item}" is not an origin such as https://app.example.com (scheme, host and port only)`);
    }
    return url.origin;
  });
}

export function parseDatabaseUrl(url: string | undefined): DatabaseConfig {
  if (!url) return { client: 'sqlite', filename: DEFAULT_SQLITE_FILE };
  if (/^sqlite:/i.test(url)) {
    // sqlite:relative/path, sqlite:/absolute/path and sqlite:///absolute/path all name a file.
    const filename = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (!filename) throw new ConfigError('DATABASE_URL: sqlite: needs a file name, e.g. sqlite:./data/records.sqlite3');
    return { client: 'sqlite', filename };
  }
  // Several hosts (a cluster's nodes) are comma-separated where one host goes; WHATWG URLs
  // cannot hold that, so each is parsed as the host of a URL of its own.
  const authority = /^([a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?)([^/?#]*)(.*)$/is.exec(url);
  if (authority && authority[2].includes(',')) {
    const hosts = authority[2].split(',').map((part) => {
      if (!part.trim()) throw new ConfigError('DATABASE_URL: an empty host in the list of hosts (write h1:3306,h2:3306)');
      const one = parseDatabaseUrl(`${authority[1]}${part.trim()}${authority[3]}`);
      return one.client === 'mysql' ? { host: one.host, port: one.port } : undefined;
    });
    const first = parseDatabaseUrl(`${authority[1]}${authority[2].split(',')[0].trim()}${authority[3]}`);
    if (first.client !== 'mysql') throw new ConfigError('DATABASE_URL: only mysql:// may name several hosts');
    return { ...first, hosts: hosts as DatabaseHost[] };
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

/** redis://[user:password@]host[:port][/db-number], or rediss:// for TLS. Never echoes a password. */
export function parseRedisUrl(url: string | undefined): RedisConfig | undefined {
  if (!url) return undefined;
  const expected = 'expected redis://[user:password@]host[:port][/db-number] or rediss://...';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`REDIS_URL is not a URL; ${expected}`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new ConfigError(`REDIS_URL: unknown scheme "${parsed.protocol.replace(/:$/, '')}"; ${expected}`);
  }
  if (!parsed.hostname) throw new ConfigError(`REDIS_URL names no host; ${expected}`);
  const db = parsed.pathname.replace(/^\//, '');
  if (db && !/^\d{1,5}$/.test(db)) throw new ConfigError(`REDIS_URL: "/${db}" is not a database number; ${expected}`);
  if (parsed.search || parsed.hash) throw new ConfigError(`REDIS_URL: query strings and fragments are not used; ${expected}`);
  for (const part of [parsed.username, parsed.password]) {
    try {
      decodeURIComponent(part);
    } catch {
      throw new ConfigError('REDIS_URL: the user name or password is not valid percent-encoding (write % as %25)');
    }
  }
  const port = parsed.port ? parseInteger('REDIS_URL port', parsed.port, 1, 65535) : 6379;
  return { url, where: `${parsed.protocol}//${parsed.hostname}:${port}/${db || '0'}` };
}

/**
 * RATE_LIMIT_PREFIX, else one that names the database: the instances of a deployment share its
 * database, and so its quota, while another deployment (or a test run, which has a database of
 * its own) on the same Redis counts apart.
 */
function parseRateLimitPrefix(value: string | undefined, database: DatabaseConfig): string {
  if (value === undefined || value === '') {
    return `records:${database.client === 'mysql' ? database.database : resolve(database.filename)}:rl:`;
  }
  if (!/^[\x21-\x7e]{1,100}$/.test(value)) {
    throw new ConfigError('RATE_LIMIT_PREFIX must be 1 to 100 printable characters without spaces, such as records:prod:rl:');
  }
  return value;
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

/** The database as logs and failures name it, without credentials. */
export function databaseWhere(config: DatabaseConfig): string {
  if (config.client === 'sqlite') return `SQLite file ${config.filename}`;
  return `MySQL ${(config.hosts ?? [config]).map((h) => `${h.host}:${h.port}`).join(',')}/${config.database}`;
}

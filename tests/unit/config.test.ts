import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { type Config, ConfigError, loadConfig } from '../../src/config';

const TOKEN_A = 'tok_aaaaaaaaaaaaaaaaaaaa';
const TOKEN_B = 'tok_bbbbbbbbbbbbbbbbbbbb';
const dir = mkdtempSync(join(tmpdir(), 'records-config-'));
const tokenFile = join(dir, 'tokens');
writeFileSync(tokenFile, `${TOKEN_A}\n\n${TOKEN_B}\r\n`);

describe('loadConfig', () => {
  test.each<[string, { given: NodeJS.ProcessEnv; want: Partial<Config> }]>([
    [
      'defaults',
      {
        given: {},
        want: {
          port: 3000,
          host: '127.0.0.1',
          bodyLimit: 1024 * 1024,
          logLevel: 'info',
          apiTokens: [],
          corsOrigins: [],
          rateLimitPerMinute: undefined,
          trustProxy: 0,
          shutdownTimeoutMs: 10000,
          pool: { size: 10, queryTimeoutMs: 5000 },
          database: { client: 'sqlite', filename: './data/records.sqlite3' },
          workers: availableParallelism(),
        },
      },
    ],
    ['worker processes', { given: { WEB_CONCURRENCY: '3' }, want: { workers: 3 } }],
    [
      'port, host and body limit',
      { given: { PORT: '0', HOST: '0.0.0.0', BODY_LIMIT: '2mb' }, want: { port: 0, host: '0.0.0.0', bodyLimit: 2 * 1024 * 1024 } },
    ],
    [
      'mysql url',
      {
        given: { DATABASE_URL: 'mysql://app:s%40cret@db.internal:3307/records' },
        want: { database: { client: 'mysql', host: 'db.internal', port: 3307, user: 'app', password: 's@cret', database: 'records' } },
      },
    ],
    ['log level, any case', { given: { LOG_LEVEL: 'WARN' }, want: { logLevel: 'warn' } }],
    ['tokens, comma-separated', { given: { API_TOKENS: ` ${TOKEN_A}, ${TOKEN_B} ,` }, want: { apiTokens: [TOKEN_A, TOKEN_B] } }],
    ['tokens from a file, one a line', { given: { API_TOKENS_FILE: tokenFile }, want: { apiTokens: [TOKEN_A, TOKEN_B] } }],
    [
      'cors origins',
      {
        given: { CORS_ORIGINS: 'https://app.example.com, http://localhost:5173/' },
        want: { corsOrigins: ['https://app.example.com', 'http://localhost:5173'] },
      },
    ],
    ['cors for any origin', { given: { CORS_ORIGINS: '*' }, want: { corsOrigins: ['*'] } }],
    ['no public URL, no allowed hosts by default', { given: {}, want: { publicUrl: undefined, allowedHosts: [] } }],
    [
      'a public URL, as its origin',
      { given: { PUBLIC_URL: 'https://API.example.com:8443/' }, want: { publicUrl: 'https://api.example.com:8443' } },
    ],
    [
      'allowed hosts, lower case',
      {
        given: { ALLOWED_HOSTS: 'API.example.com, api.example.com:8443,[::1]:3000' },
        want: { allowedHosts: ['api.example.com', 'api.example.com:8443', '[::1]:3000'] },
      },
    ],
    ['rate limit', { given: { RATE_LIMIT_PER_MINUTE: '120' }, want: { rateLimitPerMinute: 120 } }],
    ['empty rate limit: none', { given: { RATE_LIMIT_PER_MINUTE: '' }, want: { rateLimitPerMinute: undefined } }],
    // An empty variable is an unset one, for every setting (a compose file's `PORT=`).
    ['empty port and body limit: the defaults', { given: { PORT: '', BODY_LIMIT: '' }, want: { port: 3000, bodyLimit: 1024 * 1024 } }],
    ['no redis: counts in the process', { given: {}, want: { redis: undefined } }],
    [
      'redis url, its password kept out of the logged form',
      {
        given: { REDIS_URL: 'redis://app:s%40cret@cache.internal:6380/2' },
        want: { redis: { url: 'redis://app:s%40cret@cache.internal:6380/2', where: 'redis://cache.internal:6380/2' } },
      },
    ],
    [
      'redis over TLS, default port and database',
      {
        given: { REDIS_URL: 'rediss://cache.internal' },
        want: { redis: { url: 'rediss://cache.internal', where: 'rediss://cache.internal:6379/0' } },
      },
    ],
    [
      'rate limit prefix named after the mysql database',
      { given: { DATABASE_URL: 'mysql://app@db.internal/records_prod' }, want: { rateLimitPrefix: 'records:records_prod:rl:' } },
    ],
    [
      'rate limit prefix named after the sqlite file, absolute',
      {
        given: { DATABASE_URL: 'sqlite:data/a.sqlite3' },
        want: { rateLimitPrefix: `records:${join(process.cwd(), 'data/a.sqlite3')}:rl:` },
      },
    ],
    ['rate limit prefix given', { given: { RATE_LIMIT_PREFIX: 'shop:eu:rl:' }, want: { rateLimitPrefix: 'shop:eu:rl:' } }],
    [
      'pool and timeouts',
      {
        given: { DB_POOL_SIZE: '4', DB_QUERY_TIMEOUT_MS: '1500', DB_SEARCH_TURNS: '3', SHUTDOWN_TIMEOUT_MS: '30000', TRUST_PROXY: '1' },
        want: { pool: { size: 4, queryTimeoutMs: 1500 }, searchTurns: 3, shutdownTimeoutMs: 30000, trustProxy: 1 },
      },
    ],
    ['galera read-your-writes, default and set', { given: {}, want: { pool: { size: 10, queryTimeoutMs: 5000, wsrepSyncWait: 1 } } }],
    ['one search turn by default', { given: {}, want: { searchTurns: 1 } }],
    ['galera sync wait off', { given: { DB_WSREP_SYNC_WAIT: '0' }, want: { pool: { size: 10, queryTimeoutMs: 5000, wsrepSyncWait: 0 } } }],
  ])('%s', (_name, { given, want }) => {
    expect(loadConfig(given)).toMatchObject(want);
  });

  test.each<[string, { given: NodeJS.ProcessEnv; want: RegExp }]>([
    ['non-numeric port', { given: { PORT: 'http' }, want: /^PORT must be a whole number, got "http"$/ }],
    ['port out of range', { given: { PORT: '70000' }, want: /^PORT must be between 0 and 65535, got 70000$/ }],
    [
      'unknown database scheme',
      { given: { DATABASE_URL: 'postgres://localhost/records' }, want: /^DATABASE_URL: unknown scheme "postgres"/ },
    ],
    [
      'database url without a database',
      { given: { DATABASE_URL: 'mysql://root@localhost/' }, want: /^DATABASE_URL must name one database/ },
    ],
    ['bad body limit', { given: { BODY_LIMIT: 'lots' }, want: /^BODY_LIMIT must be a size/ }],
    [
      'unknown log level',
      { given: { LOG_LEVEL: 'verbose' }, want: /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/ },
    ],
    [
      'both token variables',
      { given: { API_TOKENS: TOKEN_A, API_TOKENS_FILE: tokenFile }, want: /^set API_TOKENS or API_TOKENS_FILE, not both$/ },
    ],
    ['token file missing', { given: { API_TOKENS_FILE: join(dir, 'nope') }, want: /^API_TOKENS_FILE: cannot read .*nope \(ENOENT\)$/ }],
    ['tokens that are only commas', { given: { API_TOKENS: ' , ,' }, want: /^API_TOKENS is set but holds no token$/ }],
    ['a short token', { given: { API_TOKENS: `${TOKEN_A},short` }, want: /^API_TOKENS: token 2 is shorter than 16 characters$/ }],
    [
      'a token with a space',
      { given: { API_TOKENS: 'has a space in it, really' }, want: /^API_TOKENS: token 1 has characters a bearer token cannot have$/ },
    ],
    [
      'a cors origin with a path',
      { given: { CORS_ORIGINS: 'https://app.example.com/app' }, want: /^CORS_ORIGINS: "https:\/\/app.example.com\/app" is not an origin/ },
    ],
    [
      'a cors origin that is no url',
      { given: { CORS_ORIGINS: 'app.example.com' }, want: /^CORS_ORIGINS: "app.example.com" is not an origin/ },
    ],
    [
      'a public URL with a path',
      { given: { PUBLIC_URL: 'https://api.example.com/v1' }, want: /^PUBLIC_URL: .* must be an http\(s\) origin/ },
    ],
    ['a public URL that is no URL', { given: { PUBLIC_URL: 'api.example.com' }, want: /^PUBLIC_URL: "api.example.com" is not a URL/ }],
    [
      'a public URL of another scheme',
      { given: { PUBLIC_URL: 'ftp://api.example.com' }, want: /^PUBLIC_URL: .* must be an http\(s\) origin/ },
    ],
    [
      'an allowed host with a path',
      { given: { ALLOWED_HOSTS: 'api.example.com/x' }, want: /^ALLOWED_HOSTS: "api.example.com\/x" is not a host name/ },
    ],
    ['* with other origins', { given: { CORS_ORIGINS: '*,https://a.example' }, want: /^CORS_ORIGINS: "\*" allows every origin/ }],
    ['rate limit of zero', { given: { RATE_LIMIT_PER_MINUTE: '0' }, want: /^RATE_LIMIT_PER_MINUTE must be between 1 and 1000000, got 0$/ }],
    [
      'rate limit that is not a number',
      { given: { RATE_LIMIT_PER_MINUTE: 'many' }, want: /^RATE_LIMIT_PER_MINUTE must be a whole number/ },
    ],
    ['redis url that is no url', { given: { REDIS_URL: 'redis://a b' }, want: /^REDIS_URL is not a URL; expected redis:\/\// }],
    ['redis url without a scheme', { given: { REDIS_URL: 'localhost:6379' }, want: /^REDIS_URL: unknown scheme "localhost"/ }],
    ['redis url of another scheme', { given: { REDIS_URL: 'http://127.0.0.1:6379' }, want: /^REDIS_URL: unknown scheme "http"/ }],
    ['redis url without a host', { given: { REDIS_URL: 'redis://' }, want: /^REDIS_URL names no host/ }],
    [
      'redis database that is no number, password not echoed',
      { given: { REDIS_URL: `redis://:${TOKEN_A}@h/cache` }, want: /^REDIS_URL: "\/cache" is not a database number/ },
    ],
    ['redis url with options', { given: { REDIS_URL: 'redis://h:6379/0?timeout=5' }, want: /^REDIS_URL: query strings and fragments/ }],
    ['redis port out of range', { given: { REDIS_URL: 'redis://h:0' }, want: /^REDIS_URL port must be between 1 and 65535, got 0$/ }],
    ['rate limit prefix with a space', { given: { RATE_LIMIT_PREFIX: 'my app:' }, want: /^RATE_LIMIT_PREFIX must be 1 to 100 printable/ }],
    [
      'galera sync wait past its range',
      { given: { DB_WSREP_SYNC_WAIT: '16' }, want: /^DB_WSREP_SYNC_WAIT must be between 0 and 15, got 16$/ },
    ],
    ['no worker process', { given: { WEB_CONCURRENCY: '0' }, want: /^WEB_CONCURRENCY must be between 1 and 256, got 0$/ }],
    ['pool size of zero', { given: { DB_POOL_SIZE: '0' }, want: /^DB_POOL_SIZE must be between 1 and 1000, got 0$/ }],
    ['no search turn', { given: { DB_SEARCH_TURNS: '0' }, want: /^DB_SEARCH_TURNS must be between 1 and 1000, got 0$/ }],
    [
      'query timeout in seconds by mistake',
      { given: { DB_QUERY_TIMEOUT_MS: '5s' }, want: /^DB_QUERY_TIMEOUT_MS must be a whole number, got "5s"$/ },
    ],
    [
      'shutdown timeout too small',
      { given: { SHUTDOWN_TIMEOUT_MS: '10' }, want: /^SHUTDOWN_TIMEOUT_MS must be between 100 and 3600000, got 10$/ },
    ],
  ])('%s is refused with one clear message', (_name, { given, want }) => {
    let error: unknown;
    try {
      loadConfig(given);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(want);
    // A message names the variable, never a token's value.
    expect((error as Error).message).not.toContain(TOKEN_A);
  });
});

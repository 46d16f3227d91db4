import { ConfigError, DEFAULT_SQLITE_FILE, loadConfig, parseDatabaseUrl, type Config, type DatabaseConfig } from '../src/config';

// Configuration is read once at start; a bad value must stop the service with a message that
// names the variable, never start it with a value the operator did not mean.

/** The error a call throws, so that its class and message are asserted together. */
function thrown(run: () => unknown): { isConfigError: boolean; message: string } | undefined {
  try {
    run();
  } catch (err) {
    return { isConfigError: err instanceof ConfigError, message: (err as Error).message };
  }
  return undefined;
}

const DEFAULTS: Config = {
  port: 3000,
  host: '127.0.0.1',
  database: { client: 'sqlite', filename: './data/records.sqlite3' },
  bodyLimit: 1024 * 1024,
};

describe('loadConfig', () => {
  test('an empty environment gives the documented defaults', () => {
    expect(loadConfig({})).toEqual(DEFAULTS);
    expect(DEFAULT_SQLITE_FILE).toBe('./data/records.sqlite3');
  });

  test('reads process.env when given nothing', () => {
    const saved = { ...process.env };
    try {
      for (const k of ['PORT', 'HOST', 'DATABASE_URL', 'BODY_LIMIT']) delete process.env[k];
      process.env.PORT = '4321';
      expect(loadConfig()).toEqual({ ...DEFAULTS, port: 4321 });
    } finally {
      process.env = saved;
    }
  });

  const valid: [string, { given: NodeJS.ProcessEnv; want: Partial<Config> }][] = [
    ['PORT', { given: { PORT: '8080' }, want: { port: 8080 } }],
    ['PORT 0 lets the OS choose', { given: { PORT: '0' }, want: { port: 0 } }],
    ['PORT at the top of the range', { given: { PORT: '65535' }, want: { port: 65535 } }],
    ['HOST', { given: { HOST: '0.0.0.0' }, want: { host: '0.0.0.0' } }],
    ['an empty HOST is the default', { given: { HOST: '' }, want: { host: '127.0.0.1' } }],
    ['an empty DATABASE_URL is the default', { given: { DATABASE_URL: '' }, want: { database: DEFAULTS.database } }],
    [
      'DATABASE_URL',
      {
        given: { DATABASE_URL: 'mysql://app:secret@db.example.com:3307/records' },
        want: { database: { client: 'mysql', host: 'db.example.com', port: 3307, user: 'app', password: 'secret', database: 'records' } },
      },
    ],
    ['BODY_LIMIT in bytes', { given: { BODY_LIMIT: '1048576' }, want: { bodyLimit: 1048576 } }],
    ['BODY_LIMIT in kb', { given: { BODY_LIMIT: '512kb' }, want: { bodyLimit: 512 * 1024 } }],
    ['BODY_LIMIT in mb', { given: { BODY_LIMIT: '2mb' }, want: { bodyLimit: 2 * 1024 * 1024 } }],
    ['BODY_LIMIT in gb', { given: { BODY_LIMIT: '1gb' }, want: { bodyLimit: 1024 ** 3 } }],
    ['BODY_LIMIT with an explicit b', { given: { BODY_LIMIT: '100b' }, want: { bodyLimit: 100 } }],
    ['BODY_LIMIT units ignore case', { given: { BODY_LIMIT: '1MB' }, want: { bodyLimit: 1024 * 1024 } }],
    ['BODY_LIMIT with spaces', { given: { BODY_LIMIT: ' 3 kb ' }, want: { bodyLimit: 3 * 1024 } }],
    ['BODY_LIMIT of one byte', { given: { BODY_LIMIT: '1' }, want: { bodyLimit: 1 } }],
  ];
  test.each(valid)('%s', (_, { given, want }) => {
    expect(loadConfig(given)).toEqual({ ...DEFAULTS, ...want });
  });

  const invalid: [string, { given: NodeJS.ProcessEnv; want: RegExp }][] = [
    ['PORT not a number', { given: { PORT: 'abc' }, want: /^PORT must be a whole number, got "abc"$/ }],
    ['PORT negative', { given: { PORT: '-1' }, want: /^PORT must be a whole number, got "-1"$/ }],
    ['PORT a fraction', { given: { PORT: '80.5' }, want: /^PORT must be a whole number/ }],
    ['PORT with an exponent', { given: { PORT: '8e3' }, want: /^PORT must be a whole number/ }],
    ['PORT in hexadecimal', { given: { PORT: '0x50' }, want: /^PORT must be a whole number/ }],
    ['PORT with a unit', { given: { PORT: '3000tcp' }, want: /^PORT must be a whole number/ }],
    ['PORT just past the range', { given: { PORT: '65536' }, want: /^PORT must be between 0 and 65535, got 65536$/ }],
    ['PORT far past the range', { given: { PORT: '100000000' }, want: /^PORT must be between 0 and 65535/ }],
    ['BODY_LIMIT garbage', { given: { BODY_LIMIT: 'garbage' }, want: /^BODY_LIMIT must be a size such as 1048576, 512kb or 1mb, got "garbage"$/ }],
    ['BODY_LIMIT negative', { given: { BODY_LIMIT: '-1' }, want: /^BODY_LIMIT must be a size/ }],
    ['BODY_LIMIT a fraction', { given: { BODY_LIMIT: '1.5mb' }, want: /^BODY_LIMIT must be a size/ }],
    ['BODY_LIMIT an unknown unit', { given: { BODY_LIMIT: '1tb' }, want: /^BODY_LIMIT must be a size/ }],
    ['BODY_LIMIT a unit alone', { given: { BODY_LIMIT: 'mb' }, want: /^BODY_LIMIT must be a size/ }],
    // A zero limit would refuse every body: surely a mistake.
    ['BODY_LIMIT zero', { given: { BODY_LIMIT: '0' }, want: /^BODY_LIMIT must be at least 1 byte$/ }],
    ['BODY_LIMIT zero kb', { given: { BODY_LIMIT: '0kb' }, want: /^BODY_LIMIT must be at least 1 byte$/ }],
    ['DATABASE_URL of another database', { given: { DATABASE_URL: 'postgres://x' }, want: /^DATABASE_URL: unknown scheme "postgres"; use mysql:\/\/ or sqlite:$/ }],
  ];
  test.each(invalid)('%s', (_, { given, want }) => {
    expect(thrown(() => loadConfig(given))).toEqual({ isConfigError: true, message: expect.stringMatching(want) });
  });
});

describe('parseDatabaseUrl', () => {
  const mysql = (fields: Partial<Extract<DatabaseConfig, { client: 'mysql' }>>): DatabaseConfig => ({
    client: 'mysql',
    host: '127.0.0.1',
    port: 3306,
    user: 'root',
    password: '',
    database: 'records',
    ...fields,
  });

  const valid: [string, { given: string | undefined; want: DatabaseConfig }][] = [
    ['unset: the SQLite default', { given: undefined, want: { client: 'sqlite', filename: './data/records.sqlite3' } }],
    ['empty: the SQLite default', { given: '', want: { client: 'sqlite', filename: './data/records.sqlite3' } }],
    ['mysql, everything given', { given: 'mysql://app:secret@db.example.com:3307/records', want: mysql({ host: 'db.example.com', port: 3307, user: 'app', password: 'secret' }) }],
    ['mysql, default port 3306', { given: 'mysql://app:secret@db.example.com/records', want: mysql({ host: 'db.example.com', user: 'app', password: 'secret' }) }],
    ['mysql, no user: root with no password', { given: 'mysql://127.0.0.1/records', want: mysql({}) }],
    ['mysql, user without password', { given: 'mysql://reader@127.0.0.1:3306/records', want: mysql({ user: 'reader' }) }],
    ['mysql, no host: 127.0.0.1', { given: 'mysql:///records', want: mysql({}) }],
    // Characters that would end the user info must be percent-encoded, and come back decoded.
    [
      'mysql, percent-encoded password',
      { given: 'mysql://app:p%40ss%3Aw%2Fo%25rd%20x@db:3306/records', want: mysql({ host: 'db', user: 'app', password: 'p@ss:w/o%rd x' }) },
    ],
    ['mysql, percent-encoded user', { given: 'mysql://d%C3%A9v%40corp:pw@db/records', want: mysql({ host: 'db', user: 'dév@corp', password: 'pw' }) }],
    ['mysql, percent-encoded database', { given: 'mysql://root@db/records%2Dtest', want: mysql({ host: 'db', database: 'records-test' }) }],
    ['mysql, a query string is not part of the name', { given: 'mysql://root@db/records?ssl=true', want: mysql({ host: 'db' }) }],
    ['mysql, scheme in upper case', { given: 'MYSQL://root@db/records', want: mysql({ host: 'db' }) }],
    // The driver wants the address itself, not the brackets a URL puts around it.
    ['mysql, IPv6 host', { given: 'mysql://root@[::1]:3307/records', want: mysql({ host: '::1', port: 3307 }) }],
    ['sqlite, relative path', { given: 'sqlite:data/app.sqlite3', want: { client: 'sqlite', filename: 'data/app.sqlite3' } }],
    ['sqlite, dot-relative path', { given: 'sqlite:./data/app.sqlite3', want: { client: 'sqlite', filename: './data/app.sqlite3' } }],
    ['sqlite, absolute path', { given: 'sqlite:/var/lib/records.db', want: { client: 'sqlite', filename: '/var/lib/records.db' } }],
    ['sqlite, absolute path in URL form', { given: 'sqlite:///var/lib/records.db', want: { client: 'sqlite', filename: '/var/lib/records.db' } }],
    ['sqlite, in memory', { given: 'sqlite::memory:', want: { client: 'sqlite', filename: ':memory:' } }],
    // URL schemes are case-insensitive (RFC 3986 3.1), as MYSQL:// above already is.
    ['sqlite, scheme in upper case', { given: 'SQLITE:./data/app.sqlite3', want: { client: 'sqlite', filename: './data/app.sqlite3' } }],
  ];
  test.each(valid)('%s', (_, { given, want }) => {
    expect(parseDatabaseUrl(given)).toEqual(want);
  });

  const invalid: [string, { given: string; want: RegExp }][] = [
    ['postgres', { given: 'postgres://x', want: /^DATABASE_URL: unknown scheme "postgres"; use mysql:\/\/ or sqlite:$/ }],
    ['postgresql with a database', { given: 'postgresql://root@db:5432/records', want: /unknown scheme "postgresql"/ }],
    ['http', { given: 'http://db.example.com/records', want: /unknown scheme "http"/ }],
    ['mysql2, the driver name', { given: 'mysql2://root@db/records', want: /unknown scheme "mysql2"/ }],
    ['a bare file name', { given: 'records.sqlite3', want: /^DATABASE_URL is not a URL; expected mysql:\/\/user:pass@host:port\/database or sqlite:path$/ }],
    ['sqlite without a file', { given: 'sqlite:', want: /^DATABASE_URL: sqlite: needs a file name/ }],
    ['mysql without a database', { given: 'mysql://root@db:3306/', want: /^DATABASE_URL must name one database/ }],
    ['mysql without any path', { given: 'mysql://root@db:3306', want: /^DATABASE_URL must name one database/ }],
    ['mysql with two path segments', { given: 'mysql://root@db/records/extra', want: /^DATABASE_URL must name one database/ }],
    ['mysql with an encoded slash in the name', { given: 'mysql://root@db/a%2Fb', want: /^DATABASE_URL must name one database/ }],
    ['mysql port 0', { given: 'mysql://root@db:0/records', want: /^DATABASE_URL port must be between 1 and 65535, got 0$/ }],
    ['mysql port past the range', { given: 'mysql://root@db:70000/records', want: /DATABASE_URL/ }],
    // A lone % is not an escape; the operator must hear which variable is wrong, not "URI malformed".
    ['mysql password with a bare %', { given: 'mysql://root:100%@db/records', want: /DATABASE_URL/ }],
  ];
  test.each(invalid)('%s', (_, { given, want }) => {
    expect(thrown(() => parseDatabaseUrl(given))).toEqual({ isConfigError: true, message: expect.stringMatching(want) });
  });
});

import { ConfigError, parseDatabaseUrl, type DatabaseConfig } from '../../src/config';

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
    [
      'mysql, everything given',
      {
        given: 'mysql://app:secret@db.example.com:3307/records',
        want: mysql({ host: 'db.example.com', port: 3307, user: 'app', password: 'secret' }),
      },
    ],
    [
      'mysql, default port 3306',
      { given: 'mysql://app:secret@db.example.com/records', want: mysql({ host: 'db.example.com', user: 'app', password: 'secret' }) },
    ],
    ['mysql, no user: root with no password', { given: 'mysql://127.0.0.1/records', want: mysql({}) }],
    ['mysql, user without password', { given: 'mysql://reader@127.0.0.1:3306/records', want: mysql({ user: 'reader' }) }],
    ['mysql, no host: 127.0.0.1', { given: 'mysql:///records', want: mysql({}) }],
    // Characters that would end the user info must be percent-encoded, and come back decoded.
    [
      'mysql, percent-encoded password',
      { given: 'mysql://app:p%40ss%3Aw%2Fo%25rd%20x@db:3306/records', want: mysql({ host: 'db', user: 'app', password: 'p@ss:w/o%rd x' }) },
    ],
    [
      'mysql, percent-encoded user',
      { given: 'mysql://d%C3%A9v%40corp:pw@db/records', want: mysql({ host: 'db', user: 'dév@corp', password: 'pw' }) },
    ],
    ['mysql, percent-encoded database', { given: 'mysql://root@db/records%2Dtest', want: mysql({ host: 'db', database: 'records-test' }) }],
    ['mysql, a query string is not part of the name', { given: 'mysql://root@db/records?ssl=true', want: mysql({ host: 'db' }) }],
    ['mysql, scheme in upper case', { given: 'MYSQL://root@db/records', want: mysql({ host: 'db' }) }],
    // The driver wants the address itself, not the brackets a URL puts around it.
    ['mysql, IPv6 host', { given: 'mysql://root@[::1]:3307/records', want: mysql({ host: '::1', port: 3307 }) }],
    // A cluster's nodes: new connections go to each in turn (src/db/connection.ts).
    [
      'mysql, several hosts',
      {
        given: 'mysql://app:p%2Cw@n1:3307,n2,[::1]:3309/records',
        want: mysql({
          host: 'n1',
          port: 3307,
          user: 'app',
          password: 'p,w',
          hosts: [
            { host: 'n1', port: 3307 },
            { host: 'n2', port: 3306 },
            { host: '::1', port: 3309 },
          ],
        }),
      },
    ],
    ['sqlite, relative path', { given: 'sqlite:data/app.sqlite3', want: { client: 'sqlite', filename: 'data/app.sqlite3' } }],
    ['sqlite, dot-relative path', { given: 'sqlite:./data/app.sqlite3', want: { client: 'sqlite', filename: './data/app.sqlite3' } }],
    ['sqlite, absolute path', { given: 'sqlite:/var/lib/records.db', want: { client: 'sqlite', filename: '/var/lib/records.db' } }],
    [
      'sqlite, absolute path in URL form',
      { given: 'sqlite:///var/lib/records.db', want: { client: 'sqlite', filename: '/var/lib/records.db' } },
    ],
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
    [
      'a bare file name',
      { given: 'records.sqlite3', want: /^DATABASE_URL is not a URL; expected mysql:\/\/user:pass@host:port\/database or sqlite:path$/ },
    ],
    ['sqlite without a file', { given: 'sqlite:', want: /^DATABASE_URL: sqlite: needs a file name/ }],
    ['mysql without a database', { given: 'mysql://root@db:3306/', want: /^DATABASE_URL must name one database/ }],
    ['mysql without any path', { given: 'mysql://root@db:3306', want: /^DATABASE_URL must name one database/ }],
    ['mysql with two path segments', { given: 'mysql://root@db/records/extra', want: /^DATABASE_URL must name one database/ }],
    ['mysql with an encoded slash in the name', { given: 'mysql://root@db/a%2Fb', want: /^DATABASE_URL must name one database/ }],
    ['mysql port 0', { given: 'mysql://root@db:0/records', want: /^DATABASE_URL port must be between 1 and 65535, got 0$/ }],
    ['mysql port past the range', { given: 'mysql://root@db:70000/records', want: /DATABASE_URL/ }],
    [
      'several hosts, one empty',
      { given: 'mysql://root@n1:3306,,n3:3306/records', want: /^DATABASE_URL: an empty host in the list of hosts/ },
    ],
    [
      'several hosts, one with a bad port',
      { given: 'mysql://root@n1:3306,n2:0/records', want: /^DATABASE_URL port must be between 1 and 65535, got 0$/ },
    ],
    ['several hosts, no database', { given: 'mysql://root@n1,n2/', want: /^DATABASE_URL must name one database/ }],
    // A lone % is not an escape; the operator must hear which variable is wrong, not "URI malformed".
    ['mysql password with a bare %', { given: 'mysql://root:100%@db/records', want: /DATABASE_URL/ }],
  ];
  test.each(invalid)('%s', (_, { given, want }) => {
    expect(thrown(() => parseDatabaseUrl(given))).toEqual({ isConfigError: true, message: expect.stringMatching(want) });
  });
});

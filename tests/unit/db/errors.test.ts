import { KnexTimeoutError } from 'knex';
import { classifyDbError, type DbFailure } from '../../../src/db/errors';

const withCode = (code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(code), { code, ...extra });

describe('classifyDbError', () => {
  test.each<[string, { given: unknown; want: DbFailure | undefined }]>([
    ['connection refused', { given: withCode('ECONNREFUSED'), want: { kind: 'unavailable', timeout: false } }],
    ['connection lost', { given: withCode('PROTOCOL_CONNECTION_LOST'), want: { kind: 'unavailable', timeout: false } }],
    ['server shutting down', { given: withCode('ER_SERVER_SHUTDOWN'), want: { kind: 'unavailable', timeout: false } }],
    ['connection killed', { given: withCode('ER_CONNECTION_KILLED'), want: { kind: 'unavailable', timeout: false } }],
    [
      'a fatal mysql2 error with no known code',
      { given: withCode('ER_SOMETHING_NEW', { fatal: true }), want: { kind: 'unavailable', timeout: false } },
    ],
    [
      'the query timeout',
      { given: new KnexTimeoutError('Defined query timeout of 500ms exceeded'), want: { kind: 'unavailable', timeout: true } },
    ],
    [
      'no connection within the acquire timeout',
      { given: new KnexTimeoutError('Knex: Timeout acquiring a connection.'), want: { kind: 'unavailable', timeout: true } },
    ],
    ['SQLite cannot open its file', { given: withCode('SQLITE_CANTOPEN'), want: { kind: 'unavailable', timeout: false } }],
    ['SQLite cannot read its file', { given: withCode('SQLITE_IOERR_READ'), want: { kind: 'unavailable', timeout: false } }],
    ['SQLite on a full disk', { given: withCode('SQLITE_FULL'), want: { kind: 'unavailable', timeout: false } }],
    ['a SQLite constraint', { given: withCode('SQLITE_CONSTRAINT_CHECK'), want: undefined }],
    ['a TypeError of any other kind', { given: new TypeError('x is not a function'), want: undefined }],
    ['a syntax error', { given: withCode('ER_PARSE_ERROR'), want: undefined }],
    ['a non-fatal error of any other kind', { given: withCode('ER_BAD_FIELD_ERROR', { fatal: false }), want: undefined }],
    ['not an error', { given: 'boom', want: undefined }],
  ])('%s', (_name, { given, want }) => {
    expect(classifyDbError(given, 'books', ['isbn'])).toEqual(want);
  });
});

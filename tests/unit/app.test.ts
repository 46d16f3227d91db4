import { createApp } from '../../src/app';
import { ConfigError } from '../../src/config';
import type { Db } from '../../src/db/connection';

// The app refuses, at its creation, an operation of the spec that no handler answers (as with a
// dist/ built before the spec had it), rather than answering it 500 at its first request.
jest.mock('../../src/handlers', () => {
  const actual = jest.requireActual<typeof import('../../src/handlers')>('../../src/handlers');
  return {
    ...actual,
    operationHandlers: (...args: Parameters<typeof actual.operationHandlers>) => {
      const { listPosts: _list, createPost: _create, ...rest } = actual.operationHandlers(...args);
      return rest;
    },
  };
});

// Never queried: the app is only built.
const db = { client: { config: { client: 'better-sqlite3' } } } as unknown as Db;

test('an operation without a handler stops the app at its creation, named', async () => {
  const created = createApp({ db, bodyLimit: 1024, fallbackHost: '127.0.0.1:3000' });
  await expect(created).rejects.toBeInstanceOf(ConfigError);
  await expect(created).rejects.toThrow(
    'openapi/openapi.yaml has operations that no handler answers (listPosts, createPost): register them in src/handlers, then run npm run build',
  );
});

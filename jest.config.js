// Three tiers, one folder each (docs/testing.md): unit (no database, no process, no network),
// integration (a real database: TEST_DB=sqlite, the default, or TEST_DB=mysql) and e2e (service
// processes, generated clients, clusters). `npm test` runs unit once and the other two per database.
const database = process.env.TEST_DB === 'mysql' ? 'mysql' : 'sqlite';

// Behaviour that no database can change (decided before a statement is sent, or about processes
// and generated clients): checked in the SQLite run only.
const SQLITE_ONLY = [
  'tests/integration/handlers/validation.test.ts', // request validation, before any statement
  'tests/integration/handlers/service.test.ts', // the served contract, docs and health pages
  'tests/integration/http/access.test.ts', // tokens, CORS and rate limits
  'tests/integration/http/requestContext.test.ts', // request ids and the access log
  'tests/integration/http/server.test.ts', // sockets, timeouts and keep-alive
  'tests/integration/http/validation.test.ts', // path, query and Unicode checks
  'tests/integration/http/links.test.ts', // which host absolute links name
  'tests/integration/generated/client.test.ts', // the typed client's compile-time shapes
  'tests/e2e/consumers/', // generated SDKs and Prism: about types, not storage
  'tests/e2e/service/logger.test.ts',
  'tests/e2e/service/redis.test.ts', // the shared rate-limit store
  'tests/e2e/service/service-process.test.ts',
  'tests/e2e/service/stale-build.test.ts', // what dist/ was built from
  'tests/e2e/service/npm-start.test.ts', // signals through npm
];

const tier = (name, extra = {}) => ({
  displayName: name,
  testEnvironment: 'node',
  roots: [`<rootDir>/tests/${name}`],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
    // jose ships ES modules only; jest (below Node 24.9) loads CommonJS, so it is compiled to that.
    '/node_modules/jose/.+\\.js$': ['ts-jest', { diagnostics: false, tsconfig: { allowJs: true } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  testPathIgnorePatterns: ['/node_modules/', ...(name !== 'unit' && database === 'mysql' ? SQLITE_ONLY.map((p) => `<rootDir>/${p}`) : [])],
  ...extra,
});

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 60000,
  projects: [tier('unit'), tier('integration'), tier('e2e')],
};

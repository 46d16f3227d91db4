// One jest run covers one database: TEST_DB=sqlite (default) or TEST_DB=mysql (scripts/test.mjs runs both).
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  testTimeout: 60000,
  displayName: process.env.TEST_DB === 'mysql' ? 'mysql' : 'sqlite',
};

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    // Type checking is `npm run typecheck`'s job; transpiling alone keeps the suite fast.
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
  },
  testTimeout: 30000,
};

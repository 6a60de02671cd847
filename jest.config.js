/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    // Type checking is `npm run typecheck`'s job; swc only strips the types (several times faster
    // than ts-jest), with the tsconfig's output: CommonJS, ES2022, class fields defined as tsc does.
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022', transform: { useDefineForClassFields: true } },
        module: { type: 'commonjs' },
        sourceMaps: 'inline',
      },
    ],
  },
  moduleNameMapper: {
    // packages/client is ESM source: its relative imports name the .js that tsc emits beside
    // each .ts; here, where the source itself runs, they mean the .ts.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  // Compiles the server once for the child processes the tests start.
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  testTimeout: 30000,
  // Two files at once, also on two cores (jest's default there is one): the suite waits on its
  // processes, Redis and PostgreSQL more than it computes, and every file has its own Redis
  // prefix, schema and ports. 856 tests: 673 s one at a time, 388 s two at a time.
  maxWorkers: 2,
};

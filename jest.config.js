const os = require('node:os');

/**
 * The integration tests that start processes (the server's entry points, the CLI, npm, Prometheus,
 * MCP servers over stdio, a validator): they run in `npm test` but not in `npm run test:quick`.
 * A test of the `integration` project that starts a process fails, naming itself and what it
 * started (test/support/no-processes.ts), so that this list stays true as tests are added.
 */
const STARTS_PROCESSES = [
  'agents/agents-cli',
  'api-boundaries',
  'batches/batch-cli',
  'cli-approvals',
  'cli',
  'cli-admin-over-api',
  'cli-bin',
  'cli-watch',
  'client-package',
  'cross-origin',
  'dashboard',
  'docs-examples/openai-sdk-guide',
  'examples/examples',
  'log-format',
  'multi-process',
  'npm-start',
  'openai/openai-batches',
  'openapi',
  'readiness',
  'startup',
  'store/migrate',
  'tool-turns/mcp-and-http',
  'tools/load-tool-registry',
  'tools/mcp-tools',
  'tools/mcp-where-tools-run',
  'traces',
  'usage/budget-two-apis',
  'two-deployments',
  'webhooks/webhooks-cli',
  'worker-logs',
].map((name) => `<rootDir>/test/integration/${name}.test.ts`);

/** @type {import('jest').Config} */
const common = {
  testEnvironment: 'node',
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
    // The workspace's packages by name, as their source (tsconfig.json's paths).
    '^@switchyard/(protocol|client)$': '<rootDir>/packages/$1/src/index.ts',
    // packages/ is ESM source: its relative imports name the .js that tsc emits beside each .ts;
    // here, where the source itself runs, they mean the .ts.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
};

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 30000,
  // One file more than there are cores, three on two (jest's default there is one): the suite
  // waits on its processes, Redis and PostgreSQL more than it computes, and every file has its
  // own Redis prefix, database and ports. Four at once on two cores starved the fault tests that
  // race a reader against the server (slow-chat-reader) on a loaded machine. (A percentage here
  // is read as a count past 100%.)
  maxWorkers: os.availableParallelism() + 1,
  // `npm run test:quick` is `unit` and `integration`; `npm test` all three. A project's global
  // set-up runs only when one of its files runs: `npm run test:unit` makes no database.
  projects: [
    { ...common, displayName: 'unit', roots: ['<rootDir>/test/unit'], testMatch: ['**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      roots: ['<rootDir>/test/integration'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: STARTS_PROCESSES,
      // The migrated template database every test copies.
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/no-processes.ts'],
    },
    {
      ...common,
      displayName: 'processes',
      roots: ['<rootDir>/test'],
      testMatch: ['<rootDir>/test/{faults,browser}/**/*.test.ts', ...STARTS_PROCESSES],
      // The template database, and the compiled server the processes run.
      globalSetup: '<rootDir>/test/support/global-setup-processes.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};

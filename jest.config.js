const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

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

/**
 * Under `npm test`, `npm run test:quick`, `npm run test:integration` and `npm run test:unit`, the
 * integration and unit projects' files run in groups (test/support/test-group.ts): one jest file
 * per group, each member inside a describe block of its own, so that the modules they load
 * (bullmq, zod, openai, undici…) are loaded and compiled once per group instead of once per file,
 * about 1.5 s of CPU per integration file on this project's 2-core machine; the unit tests, 99
 * files, take 8–11 CPU-s grouped instead of 21. Jest started by hand, or given paths of files or
 * area folders, runs the files as they are; SWITCHYARD_TEST_GROUPS=0 or 1 says so either way.
 */
const GROUPED_SCRIPTS = ['test', 'test:quick', 'test:integration', 'test:unit'];
const TEST_ROOTS = ['test', 'test/unit', 'test/integration', 'test/faults', 'test/browser'].map((dir) => path.resolve(__dirname, dir));
/**
 * The group files of each grouped project. The processes project's files (fault tests,
 * STARTS_PROCESSES) still run one by one: grouped, they were not yet seen to stay as reliable on
 * a loaded machine.
 */
const INTEGRATION_GROUPS = path.join(__dirname, 'test/integration/groups');
const UNIT_GROUPS = path.join(__dirname, 'test/unit/groups');

function namesNarrowerPaths() {
  return process.argv
    .slice(2)
    .filter((arg) => !arg.startsWith('-'))
    .map((arg) => path.resolve(arg))
    .some((file) => file.startsWith(path.join(__dirname, 'test') + path.sep) && !TEST_ROOTS.includes(file) && fs.existsSync(file));
}

function groupsWanted() {
  const setting = process.env.SWITCHYARD_TEST_GROUPS;
  if (setting === '0' || setting === '1') return setting === '1';
  return GROUPED_SCRIPTS.includes(process.env.npm_lifecycle_event ?? '') && !namesNarrowerPaths();
}

function testFilesUnder(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return file === INTEGRATION_GROUPS || file === UNIT_GROUPS ? [] : testFilesUnder(file);
    return entry.name.endsWith('.test.ts') ? [file] : [];
  });
}

const startsProcesses = new Set(STARTS_PROCESSES.map((file) => file.replace('<rootDir>', __dirname)));

/**
 * `files` in as many groups as `groupsDir` has group files, in path order so that a group holds
 * neighbours of one area, the groups' sizes differing by one at most: every file is in exactly
 * one group, a new file too. Keyed by the group file's name (test/support/test-group.ts).
 */
function groupsOf(groupsDir, files) {
  const groupFiles = fs
    .readdirSync(groupsDir)
    .filter((name) => name.endsWith('.test.ts'))
    .sort();
  const sorted = [...files].sort();
  const groups = {};
  let next = 0;
  groupFiles.forEach((name, i) => {
    const size = Math.floor(sorted.length / groupFiles.length) + (i < sorted.length % groupFiles.length ? 1 : 0);
    groups[name] = sorted.slice(next, next + size);
    next += size;
  });
  return groups;
}

const integrationFiles = () => testFilesUnder(path.join(__dirname, 'test/integration')).filter((file) => !startsProcesses.has(file));

const grouped = groupsWanted();

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
  // Longest first on a fresh clone too: a group weighs as the files it runs.
  testSequencer: '<rootDir>/test/support/test-sequencer.cjs',
  // One file more than there are cores, three on two (jest's default there is one): the suite
  // waits on its processes, Redis and PostgreSQL more than it computes, and every file has its
  // own Redis prefix, database and ports. Four at once on two cores starved the fault tests that
  // race a reader against the server (slow-chat-reader) on a loaded machine. (A percentage here
  // is read as a count past 100%.)
  maxWorkers: os.availableParallelism() + 1,
  // `npm run test:quick` is `unit` and `integration`; `npm test` all three. A project's global
  // set-up runs only when one of its files runs: `npm run test:unit` makes no database.
  projects: [
    {
      ...common,
      displayName: 'unit',
      roots: ['<rootDir>/test/unit'],
      ...(grouped
        ? { testMatch: ['<rootDir>/test/unit/groups/*.test.ts'], globals: { switchyardTestGroups: groupsOf(UNIT_GROUPS, testFilesUnder(path.join(__dirname, 'test/unit'))) } }
        : { testMatch: ['**/*.test.ts'], testPathIgnorePatterns: ['<rootDir>/test/unit/groups/'] }),
    },
    {
      ...common,
      displayName: 'integration',
      roots: ['<rootDir>/test/integration'],
      testMatch: ['**/*.test.ts'],
      ...(grouped
        ? { testMatch: ['<rootDir>/test/integration/groups/*.test.ts'], globals: { switchyardTestGroups: groupsOf(INTEGRATION_GROUPS, integrationFiles()) } }
        : { testPathIgnorePatterns: [...STARTS_PROCESSES, '<rootDir>/test/integration/groups/'] }),
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

/**
 * The rooms of src/, top to bottom (README, "Architecture"). A room imports rooms of its own
 * layer or below, never above; `madge --circular` keeps rooms of one layer from importing each
 * other in a circle. `npm run lint:imports` checks it, and CI runs it.
 *
 * A feature room (openai/) keeps a feature in one folder at three heights: its routes
 * (`<feature>/routes/`: its route family, routers, answer schemas), above api/, whose middleware
 * and answer helpers they use, and mounted by runtime/ alone; its core (`<feature>/`: requests,
 * services, mappings) in the layer of what it runs on and of what uses it; its repositories
 * (`<feature>/store/`) beside store/. A folder's rule leaves out its subfolders listed here.
 */
const LAYERS = [
  ['workers'],
  ['runtime'],
  ['openai/routes', 'usage/routes', 'agents/routes', 'schedules/routes'],
  ['api', 'gateway', 'cli', 'playground'],
  ['ui-chat', 'batches', 'openai', 'schedules'],
  ['turns'],
  ['tool-calls'],
  ['tools', 'subscriptions', 'auth', 'webhooks', 'models', 'usage', 'agents'],
  ['event-log', 'store', 'queue', 'openai/store', 'usage/store', 'agents/store', 'schedules/store'],
  ['providers', 'config', 'metrics', 'tracing', 'logging', 'scripted-model'],
  ['redis'],
  ['events', 'errors', 'storable', 'limits', 'timers'],
];

const ROOMS = LAYERS.flat();
/** A room's files: its folder, without the subfolders that are rooms of their own. */
const roomPath = (room) => {
  if (room === 'workers') return '^workers/';
  const subrooms = ROOMS.filter((other) => other.startsWith(`${room}/`)).map((other) => `${other.slice(room.length + 1)}/`);
  return subrooms.length === 0 ? `^src/${room}/` : `^src/${room}/(?!${subrooms.join('|')})`;
};
const anyOf = (rooms) => rooms.map(roomPath).join('|');

const upwardRules = LAYERS.flatMap((rooms, depth) =>
  depth === 0
    ? []
    : rooms.map((room) => ({
        name: `${room}-imports-no-room-above-it`,
        comment: `${room}/ is below ${LAYERS.slice(0, depth).flat().join(', ')}`,
        severity: 'error',
        from: { path: roomPath(room) },
        to: { path: anyOf(LAYERS.slice(0, depth).flat()) },
      })),
);

module.exports = {
  forbidden: [
    ...upwardRules,
    {
      name: 'only-workers-import-runtime',
      comment: 'runtime/ is wiring: the entry points in workers/ start it, nothing else reaches into it',
      severity: 'error',
      from: { pathNot: '^(workers|src/runtime)/' },
      to: { path: '^src/runtime/' },
    },
    {
      name: 'protocol-package-is-a-leaf',
      comment: '@switchyard/protocol (packages/protocol) is what the server and the clients share: it imports zod and nothing of theirs',
      severity: 'error',
      from: { path: '^packages/protocol/src/' },
      to: { pathNot: '^packages/protocol/src/|node_modules/zod/' },
    },
    {
      name: 'client-package-imports-nothing-of-the-server',
      comment: '@switchyard/client (packages/client) is installed by other projects: it imports the protocol, never the server',
      severity: 'error',
      from: { path: '^packages/client/src/' },
      to: { pathNot: '^packages/(client|protocol)/src/|node_modules/(zod|eventsource-parser)/' },
    },
    {
      name: 'packages-import-no-node-module',
      comment: '@switchyard/protocol and @switchyard/client run in browsers: no node: or other built-in module',
      severity: 'error',
      from: { path: '^packages/(protocol|client)/src/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'a-package-is-imported-by-its-name',
      comment: 'from outside a package, only its entry (what its name resolves to, tsconfig.json paths): no reaching into its src/',
      severity: 'error',
      from: { path: '^(src|workers|packages/[^/]+)/' },
      to: { path: '^packages/[^/]+/src/', pathNot: '^$1/|^packages/[^/]+/src/index\\.ts$' },
    },
    {
      name: 'only-the-command-line-imports-the-client-package',
      comment: 'the server answers with the protocol; its command line (cli/, batches/batch-cli.ts, usage/usage-cli.ts) is a client of the API like any other',
      severity: 'error',
      from: { path: '^(src|workers)/', pathNot: '^src/(cli/|batches/batch-cli\\.ts$|usage/usage-cli\\.ts$)' },
      to: { path: '^packages/client/' },
    },
    {
      name: 'every-file-is-in-a-room',
      comment: 'a folder of src/ that is not in LAYERS has no place in the rules: add it there',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: anyOf(ROOMS) },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};

// Run as a script (the end of `npm run lint:imports`): the rooms just checked, top to bottom.
if (require.main === module) {
  console.log('rooms, top to bottom (each imports its own layer or below):');
  for (const rooms of LAYERS) console.log(`  ${rooms.map((room) => `${room}/`).join(' ')}`);
}

/** One command of `npm run cli`: how it is written and what it does. */
interface CommandUsage {
  /** The words that name it (`users create`); `help` for one group lists the commands starting with its word. */
  name: string;
  synopsis: string;
  description: string;
}

const API_OPTIONS = '[--url URL] [--key KEY]';

const COMMANDS: CommandUsage[] = [
  { name: 'users create', synopsis: 'users create <name>', description: "make a user; prints its id, its key's id and the API key (shown once)" },
  { name: 'users list', synopsis: 'users list', description: 'list users' },
  {
    name: 'users tools',
    synopsis: 'users tools <userId> <a,b|all>',
    description: 'limit a user\'s turns to these tools ("" for none; all lifts the limit); unknown names are refused',
  },
  { name: 'keys create', synopsis: 'keys create <userId> [--name NAME]', description: 'another API key for a user; prints it (shown once)' },
  { name: 'keys list', synopsis: 'keys list <userId>', description: "a user's keys: id, name, first characters, created, last used and revoked times (never the key)" },
  {
    name: 'keys revoke',
    synopsis: 'keys revoke <keyId>',
    description: 'revoke a key at once (its open websockets and SSE streams close too); a key revoked before is answered as it is',
  },
  {
    name: 'batch run',
    synopsis: `batch run <items.jsonl> --out <results.jsonl> [--concurrency N] [--skip-invalid] ${API_OPTIONS}`,
    description:
      'run a batch with a progress bar, writing result lines as items end; --skip-invalid runs the valid\n' +
      'lines and lists the others; the same command again resumes it and writes only what is missing',
  },
  { name: 'batch status', synopsis: `batch status <batchId> ${API_OPTIONS}`, description: "a batch's status, counts, usage and ETA" },
  { name: 'batch cancel', synopsis: `batch cancel <batchId> ${API_OPTIONS}`, description: 'cancel a batch' },
  { name: 'batch retry', synopsis: `batch retry <batchId> ${API_OPTIONS}`, description: 'run its failed items again' },
  { name: 'batch results', synopsis: `batch results <batchId> ${API_OPTIONS}`, description: "every ended item's result line, in input order" },
  {
    name: 'approvals list',
    synopsis: `approvals list ${API_OPTIONS}`,
    description: 'the tool calls of your conversations that wait for a decision, newest first, one JSON line each',
  },
  {
    name: 'approve',
    synopsis: `approve <turnId> <toolCallId> [--deny] [--reason TEXT] [--args JSON] ${API_OPTIONS}`,
    description: 'decide a call that waits for approval (--deny: it never runs; --args: run it with these arguments);\nprints the stored decision (the first decision wins)',
  },
  {
    name: 'webhooks add',
    synopsis: `webhooks add <url> [--events a,b] [--description TEXT] ${API_OPTIONS}`,
    description: 'register an endpoint for events (default --events "*"); prints its secret (shown once)',
  },
  { name: 'webhooks list', synopsis: `webhooks list ${API_OPTIONS}`, description: 'your endpoints, and whether one was disabled for failing' },
  { name: 'webhooks delete', synopsis: `webhooks delete <webhookId> ${API_OPTIONS}`, description: 'delete an endpoint (its pending deliveries are not sent)' },
  { name: 'webhooks rotate', synopsis: `webhooks rotate <webhookId> ${API_OPTIONS}`, description: 'a new secret; the old one keeps signing for 24 h' },
  { name: 'webhooks enable', synopsis: `webhooks enable <webhookId> ${API_OPTIONS}`, description: 'take an endpoint disabled for failing back into service' },
  { name: 'webhooks deliveries', synopsis: `webhooks deliveries <webhookId> ${API_OPTIONS}`, description: "an endpoint's latest deliveries: status, attempts, last answer" },
  { name: 'webhooks redeliver', synopsis: `webhooks redeliver <webhookId> <deliveryId> ${API_OPTIONS}`, description: 'send a delivery again (the same webhook-id)' },
  { name: 'agents list', synopsis: `agents list ${API_OPTIONS}`, description: 'your agents not archived, the latest version of each' },
  { name: 'agents show', synopsis: `agents show <agentId> [--version N] ${API_OPTIONS}`, description: "an agent's latest version (or --version N)" },
  {
    name: 'schedules create',
    synopsis: `schedules create --content TEXT (--cron EXPR | --every 15m | --at ISO) [--timezone ZONE] [--agent REF] [--conversation ID] ${API_OPTIONS}`,
    description: 'a schedule whose runs post --content as a turn (a new conversation each run unless --conversation)',
  },
  { name: 'schedules list', synopsis: `schedules list ${API_OPTIONS}`, description: 'your schedules and their next runs' },
  { name: 'schedules pause', synopsis: `schedules pause <scheduleId> ${API_OPTIONS}`, description: 'no tick runs until it is resumed' },
  { name: 'schedules resume', synopsis: `schedules resume <scheduleId> ${API_OPTIONS}`, description: 'from the next tick after now (ticks while paused are not caught up)' },
  { name: 'schedules delete', synopsis: `schedules delete <scheduleId> ${API_OPTIONS}`, description: 'delete a schedule and its runs' },
  { name: 'schedules runs', synopsis: `schedules runs <scheduleId> ${API_OPTIONS}`, description: "a schedule's runs, newest first: started, skipped or refused" },
  {
    name: 'usage',
    synopsis: `usage [--user ID] [--from ISO --to ISO] [--by day|model|conversation] ${API_OPTIONS}`,
    description: "the usage ledger's sums as a table: calls, tokens and cost (--user: one user's, with the admin token)",
  },
  {
    name: 'watch',
    synopsis: `watch <conversationId> [--after SEQ] [--json] ${API_OPTIONS}`,
    description:
      "follow a conversation as it happens: the model's text as it streams, tool calls as cards, statuses;\n" +
      '--json prints the raw frames instead, one a line (websocket; reconnects and resumes where it was)',
  },
];

const FOOTER = [
  'The users and keys commands open the database itself (DATABASE_URL, else the embedded one in DATA_DIR,',
  'which `npm start` makes); while `npm start` holds the embedded one, or with --url or SWITCHYARD_URL, they',
  "go through the service's admin routes with --key, else ADMIN_TOKEN, else the token `npm start` keeps in",
  'DATA_DIR/dev-admin-token. The other commands talk to the API: --url, else SWITCHYARD_URL (default',
  'http://127.0.0.1:3000), and --key, else SWITCHYARD_API_KEY, else the key `npm start` keeps in DATA_DIR.',
  'Every command takes --help.',
].join('\n');

/** How the CLI is run from the checkout; installed, it is the `switchyard` bin. */
export const CHECKOUT_PROGRAM = 'npm run cli --';

const render = (command: CommandUsage) => `  ${command.synopsis}\n${command.description.replace(/^/gm, '      ')}`;

/**
 * Usage for what was typed before `--help` (or after a mistake): the command's own when the
 * words name one, its group's when they name a group, else every command.
 */
export function usageFor(words: readonly string[], program = CHECKOUT_PROGRAM): string {
  const [group, command] = words;
  const exact = COMMANDS.find((each) => each.name === `${group} ${command}` || (each.name === group && !each.name.includes(' ')));
  if (exact) return `usage: ${program} ${exact.synopsis}\n${exact.description.replace(/^/gm, '  ')}`;
  const ofGroup = COMMANDS.filter((each) => each.name.startsWith(`${group} `));
  if (ofGroup.length > 0) return `usage: ${program} ${group} <command>\n${ofGroup.map(render).join('\n')}`;
  return `usage: ${program} <command> [--help]\n${COMMANDS.map(render).join('\n')}\n${FOOTER}`;
}

/** The one-line synopsis of a command, for a refusal of missing arguments. */
export function synopsisOf(name: string, program = CHECKOUT_PROGRAM): string {
  const command = COMMANDS.find((each) => each.name === name);
  return `usage: ${program} ${command?.synopsis ?? name}`;
}

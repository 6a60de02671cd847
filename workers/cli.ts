import { parseArgs } from 'node:util';
import { announceRevocation } from '../src/auth/revocation-watch';
import { batchCommand, runBatchFile } from '../src/batches/batch-cli';
import { ApiUnreachableError, fetchReaching } from '../src/cli/api-unreachable';
import { decideApproval, listPendingApprovals, parseArgsOption } from '../src/cli/approvals-command';
import { knownToolsForCli } from '../src/cli/cli-known-tools';
import { synopsisOf, usageFor } from '../src/cli/cli-usage';
import { watchConversation } from '../src/cli/watch-command';
import { isWebhookCommand, WEBHOOK_COMMANDS, webhooksCommand } from '../src/cli/webhooks-command';
import { AGENT_COMMANDS, agentsCommand, isAgentCommand } from '../src/cli/agents-command';
import { isScheduleCommand, SCHEDULE_COMMANDS, schedulesCommand } from '../src/cli/schedules-command';
import { usageCommand } from '../src/usage/usage-cli';
import { loadConfig, type Config } from '../src/config/config';
import { errorMessage } from '../src/errors/switchyard-error';
import { embeddedDatabaseDir, embeddedDatabaseExists } from '../src/store/embedded-database';
import { migrate } from '../src/store/migrate';
import { openDb } from '../src/store/open-db';
import { UsersRepository } from '../src/store/users-repository';
import { configuredRedisTarget, connectRedis, whenReady } from '../src/redis/redis-connection';
import { apiKeyForCli } from '../src/runtime/dev-api-key';
import { EXAMPLE_TOOLS_DIR } from '../src/runtime/example-tools-dir';
import { unknownToolNames, unknownToolsMessage } from '../src/tools/known-tools';

const noKey = (dataDir: string) => `no API key: pass --key <key>, set SWITCHYARD_API_KEY, or run \`npm start\` once (it keeps a dev key in DATA_DIR; there is none in ${dataDir})`;
const DEFAULT_URL = 'http://127.0.0.1:3000';

const OPTIONS = {
  url: { type: 'string' },
  key: { type: 'string' },
  after: { type: 'string' },
  out: { type: 'string' },
  concurrency: { type: 'string' },
  'skip-invalid': { type: 'boolean' },
  deny: { type: 'boolean' },
  reason: { type: 'string' },
  args: { type: 'string' },
  events: { type: 'string' },
  description: { type: 'string' },
  version: { type: 'string' },
  content: { type: 'string' },
  cron: { type: 'string' },
  every: { type: 'string' },
  at: { type: 'string' },
  timezone: { type: 'string' },
  agent: { type: 'string' },
  conversation: { type: 'string' },
  user: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  by: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  if (values.help || positionals[0] === 'help') {
    process.stdout.write(`${usageFor(positionals[0] === 'help' ? positionals.slice(1) : positionals)}\n`);
    return 0;
  }
  const [group, command, argument] = positionals;
  if (group === 'usage') return usage(values);
  if (group === 'watch' || group === 'batch' || group === 'approvals' || group === 'approve' || group === 'webhooks' || group === 'agents' || group === 'schedules') {
    const { DATA_DIR } = loadConfig();
    const key = apiKeyForCli(values.key, process.env, DATA_DIR);
    const baseUrl = (values.url ?? DEFAULT_URL).replace(/\/+$/, '');
    if (group === 'watch') return watch(command, { ...values, baseUrl, key, dataDir: DATA_DIR });
    if (group === 'approvals') return approvals(command, { ...values, baseUrl, key, dataDir: DATA_DIR });
    if (group === 'approve') return approve(command, argument, { ...values, baseUrl, key, dataDir: DATA_DIR });
    if (group === 'webhooks') return webhooks(command, positionals.slice(2), { ...values, baseUrl, key, dataDir: DATA_DIR });
    if (group === 'agents') return agents(command, positionals.slice(2), { ...values, baseUrl, key, dataDir: DATA_DIR });
    if (group === 'schedules') return schedules(command, positionals.slice(2), { ...values, baseUrl, key, dataDir: DATA_DIR });
    return batch(command, argument, { ...values, baseUrl, key, dataDir: DATA_DIR });
  }
  if (!group || !command) return fail(usageFor(positionals));

  const config = loadConfig();
  // A DATA_DIR other than the server's would get a new, empty database of its own: never made here.
  if (!config.DATABASE_URL && !embeddedDatabaseExists(config.DATA_DIR)) {
    return fail(
      `no Switchyard database in DATA_DIR ${config.DATA_DIR} (nothing at ${embeddedDatabaseDir(config.DATA_DIR)}): ` +
        'set DATA_DIR to the one your server uses (or DATABASE_URL), or run `npm start` there once to make it',
    );
  }
  const db = await openDb({ databaseUrl: config.DATABASE_URL, schema: config.DATABASE_SCHEMA, dataDir: config.DATA_DIR });
  try {
    await migrate(db);
    const users = new UsersRepository(db);
    switch (`${group} ${command}`) {
      case 'users create':
        if (!argument) return fail(synopsisOf('users create'));
        print(await users.createUserWithKey(argument));
        return 0;
      case 'users list':
        print(await users.listUsers());
        return 0;
      case 'users tools': {
        const list = positionals[3];
        if (!argument || list === undefined) return fail(synopsisOf('users tools'));
        const tools =
          list === 'all'
            ? null
            : list
                .split(',')
                .map((name) => name.trim())
                .filter(Boolean);
        if (tools) {
          const known = await knownToolsForCli(toolsDirOf(config), process.env);
          const unknown = unknownToolNames(tools, known);
          if (unknown.length > 0) return fail(unknownToolsMessage(unknown, known));
        }
        if (!(await users.setAllowedTools(argument, tools))) return fail(`no user ${argument}`);
        print({ id: argument, allowedTools: tools });
        return 0;
      }
      case 'keys create':
        if (!argument) return fail(synopsisOf('keys create'));
        if (!(await users.getUser(argument))) return fail(`no user ${argument}`);
        print(await users.createApiKey(argument));
        return 0;
      case 'keys list':
        if (!argument) return fail(synopsisOf('keys list'));
        if (!(await users.getUser(argument))) return fail(`no user ${argument}`);
        print(await users.listApiKeys(argument));
        return 0;
      case 'keys revoke': {
        if (!argument) return fail(synopsisOf('keys revoke'));
        if (!(await users.revokeApiKey(argument))) {
          const key = await users.getApiKey(argument);
          return fail(key ? `key ${argument} was already revoked at ${key.revokedAt}` : `no key ${argument} (npm run cli -- keys list <userId> lists a user's keys)`);
        }
        print({ revoked: argument, announced: await announce(config, argument) });
        return 0;
      }
      default:
        return fail(usageFor(positionals));
    }
  } finally {
    await db.close();
  }
}

/**
 * The tools folder the server reads: TOOLS_DIR, else, on the embedded database (that is, under
 * `npm start`), the example tools `npm start` offers.
 */
function toolsDirOf(config: Config): string {
  return (process.env.TOOLS_DIR ?? config.DATABASE_URL) ? config.TOOLS_DIR : EXAMPLE_TOOLS_DIR;
}

/**
 * Tells the running API processes, so that the key's open websockets and SSE streams close at
 * once, and forget the keys they verified; those that miss it find the revocation in the database
 * within KEY_REVOCATION_CHECK_MS (open connections) and API_KEY_CACHE_TTL_MS (new requests).
 * (With the embedded defaults the CLI runs only while `npm start` is stopped: nothing to tell.)
 */
async function announce(config: Config, keyId: string): Promise<boolean> {
  const target = configuredRedisTarget(config);
  if (!target) return false;
  const redis = connectRedis(target, 'command');
  redis.on('error', () => undefined);
  try {
    await whenReady(redis, 2000);
    await announceRevocation(redis, config.REDIS_PREFIX, keyId);
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

type ApiCommandOptions = {
  baseUrl: string;
  dataDir: string;
  key?: string;
  out?: string;
  concurrency?: string;
  after?: string;
  'skip-invalid'?: boolean;
  deny?: boolean;
  reason?: string;
  args?: string;
  events?: string;
  description?: string;
  version?: string;
  content?: string;
  cron?: string;
  every?: string;
  at?: string;
  timezone?: string;
  agent?: string;
  conversation?: string;
};

async function approvals(command: string | undefined, options: ApiCommandOptions): Promise<number> {
  if (command !== 'list') return fail(usageFor(['approvals', ...(command ? [command] : [])]));
  if (!options.key) return fail(noKey(options.dataDir));
  const count = await listPendingApprovals(approvalsConnection(options, options.key));
  process.stderr.write(`${count} pending\n`);
  return 0;
}

async function approve(turnId: string | undefined, toolCallId: string | undefined, options: ApiCommandOptions): Promise<number> {
  if (!turnId || !toolCallId) return fail(synopsisOf('approve'));
  if (!options.key) return fail(noKey(options.dataDir));
  const args = options.args === undefined ? undefined : parseArgsOption(options.args);
  if (typeof args === 'string') return fail(args);
  const decision = { turnId, toolCallId, approved: !options.deny, ...(options.reason === undefined ? {} : { reason: options.reason }), ...(args ? { args } : {}) };
  await decideApproval(decision, approvalsConnection(options, options.key));
  return 0;
}

function approvalsConnection(options: ApiCommandOptions, key: string) {
  return { baseUrl: options.baseUrl, token: key, fetch: fetchReaching(options.baseUrl), print: (line: string) => process.stdout.write(`${line}\n`) };
}

async function webhooks(command: string | undefined, args: string[], options: ApiCommandOptions): Promise<number> {
  if (!isWebhookCommand(command)) return fail(usageFor(['webhooks']));
  if (args.length < WEBHOOK_COMMANDS[command].length) return fail(synopsisOf(`webhooks ${command}`));
  if (!options.key) return fail(noKey(options.dataDir));
  await webhooksCommand(command, args, {
    baseUrl: options.baseUrl,
    token: options.key,
    fetch: fetchReaching(options.baseUrl),
    stdout: process.stdout,
    ...(options.events ? { events: options.events } : {}),
    ...(options.description ? { description: options.description } : {}),
  });
  return 0;
}

async function agents(command: string | undefined, args: string[], options: ApiCommandOptions): Promise<number> {
  if (!isAgentCommand(command)) return fail(usageFor(['agents']));
  if (args.length < AGENT_COMMANDS[command].length) return fail(synopsisOf(`agents ${command}`));
  if (!options.key) return fail(noKey(options.dataDir));
  await agentsCommand(command, args, {
    baseUrl: options.baseUrl,
    token: options.key,
    fetch: fetchReaching(options.baseUrl),
    stdout: process.stdout,
    ...(options.version ? { version: options.version } : {}),
  });
  return 0;
}

async function schedules(command: string | undefined, args: string[], options: ApiCommandOptions): Promise<number> {
  if (!isScheduleCommand(command)) return fail(usageFor(['schedules']));
  if (args.length < SCHEDULE_COMMANDS[command].length) return fail(synopsisOf(`schedules ${command}`));
  if (!options.key) return fail(noKey(options.dataDir));
  const { content, cron, every, at, timezone, agent, conversation } = options;
  await schedulesCommand(command, args, {
    baseUrl: options.baseUrl,
    token: options.key,
    fetch: fetchReaching(options.baseUrl),
    stdout: process.stdout,
    ...Object.fromEntries(Object.entries({ content, cron, every, at, timezone, agent, conversation }).filter(([, value]) => value !== undefined)),
  });
  return 0;
}

/** The ledger's sums: the key's user's, or with --user one user's through the admin route (ADMIN_TOKEN, or --key). */
async function usage(values: { url?: string; key?: string; user?: string; from?: string; to?: string; by?: string }): Promise<number> {
  const baseUrl = (values.url ?? DEFAULT_URL).replace(/\/+$/, '');
  const { DATA_DIR } = loadConfig();
  const token = values.user ? (values.key ?? process.env.ADMIN_TOKEN) : apiKeyForCli(values.key, process.env, DATA_DIR);
  if (!token) return fail(values.user ? 'usage --user reads the admin route: pass --key <ADMIN_TOKEN> or set ADMIN_TOKEN' : noKey(DATA_DIR));
  if (values.by && !['day', 'model', 'conversation'].includes(values.by)) return fail(synopsisOf('usage'));
  await usageCommand({
    baseUrl,
    token,
    fetch: fetchReaching(baseUrl),
    stdout: process.stdout,
    ...(values.user ? { user: values.user } : {}),
    ...(values.from ? { from: values.from } : {}),
    ...(values.to ? { to: values.to } : {}),
    ...(values.by ? { by: values.by } : {}),
  });
  return 0;
}

async function batch(command: string | undefined, argument: string | undefined, options: ApiCommandOptions): Promise<number> {
  if (!command || !argument) return fail(usageFor(['batch', ...(command ? [command] : [])]));
  if (!['run', 'status', 'cancel', 'retry', 'results'].includes(command)) return fail(usageFor(['batch']));
  if (!options.key) return fail(noKey(options.dataDir));
  const connection = { baseUrl: options.baseUrl, token: options.key, progress: process.stderr, fetch: fetchReaching(options.baseUrl) };
  if (command !== 'run') return batchCommand(command, argument, { ...connection, stdout: process.stdout });
  if (!options.out) return fail(`batch run needs --out <results.jsonl>\n${synopsisOf('batch run')}`);
  const concurrency = options.concurrency === undefined ? undefined : Number(options.concurrency);
  if (concurrency !== undefined && !Number.isInteger(concurrency)) return fail('--concurrency must be an integer');
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  return runBatchFile(
    { file: argument, out: options.out, ...(concurrency ? { concurrency } : {}), skipInvalid: options['skip-invalid'] ?? false },
    { ...connection, signal: stop.signal },
  );
}

function watch(conversationId: string | undefined, options: ApiCommandOptions): Promise<number> | number {
  if (!conversationId) return fail(synopsisOf('watch'));
  if (!options.key) return fail(noKey(options.dataDir));
  const after = options.after === undefined ? undefined : Number(options.after);
  if (after !== undefined && !Number.isInteger(after)) return fail('--after must be a seq (an integer)');
  return watchConversation(conversationId, {
    baseUrl: options.baseUrl,
    key: options.key,
    ...(after === undefined ? {} : { after }),
    print: (value) => print(value, 0),
    say: (line) => process.stderr.write(`${line}\n`),
  });
}

function print(value: unknown, indent = 2): void {
  process.stdout.write(`${JSON.stringify(value, null, indent)}\n`);
}

function fail(message: string): number {
  process.stderr.write(`${message}\n`);
  return 1;
}

/** One line for what the user can fix (a wrong option, a URL where nothing answers), never a stack. */
function describeFailure(error: unknown): string {
  if (ApiUnreachableError.isInstance(error)) return error.message;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) return `${errorMessage(error)}\n(npm run cli -- --help lists the commands and their options)`;
  return errorMessage(error);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`switchyard cli: ${describeFailure(error)}\n`);
    process.exit(1);
  },
);

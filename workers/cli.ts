#!/usr/bin/env node
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { AdminBackend } from '../src/cli/admin-backend';
import { adminCommand, adminUsageProblem, isAdminCommand } from '../src/cli/admin-command';
import { ApiUnreachableError, fetchReaching } from '../src/cli/api-unreachable';
import { httpAdmin } from '../src/cli/http-admin';
import { decideApproval, listPendingApprovals, parseArgsOption } from '../src/cli/approvals-command';
import { CHECKOUT_PROGRAM, synopsisOf as synopsisIn, usageFor as usageIn } from '../src/cli/cli-usage';
import { WatchText } from '../src/cli/watch-text';
import { isWebhookCommand, WEBHOOK_COMMANDS, webhooksCommand } from '../src/cli/webhooks-command';
import { AGENT_COMMANDS, agentsCommand, isAgentCommand } from '../src/cli/agents-command';
import { isScheduleCommand, SCHEDULE_COMMANDS, schedulesCommand } from '../src/cli/schedules-command';
import { usageCommand } from '../src/usage/usage-cli';
import { loadConfig, type Config } from '../src/config/config';
import { errorMessage } from '../src/errors/switchyard-error';
import type { Db } from '../src/store/db';
import { embeddedDatabaseDir, embeddedDatabaseExists } from '../src/store/embedded-database';
import { adminTokenForCli } from '../src/runtime/dev-admin-token';
import { apiKeyForCli } from '../src/runtime/dev-api-key';
import { EXAMPLE_TOOLS_DIR } from '../src/runtime/example-tools-dir';

// The modules of one command or backend (the database's, Redis's, the tools', the websocket's,
// the batch runner's) are required where they are used: a run of the CLI loads what its command
// needs, not the whole server (bullmq, pg, ajv, ws…), so `--help` or a failing `users list`
// costs about 0.2 s of CPU instead of 0.5. A `require`, not `import()`: the compiled CommonJS
// would keep an `import()` as Node's ESM import, which wants file extensions.

const noKey = (dataDir: string) => `no API key: pass --key <key>, set SWITCHYARD_API_KEY, or run \`npm start\` once (it keeps a dev key in DATA_DIR; there is none in ${dataDir})`;
const DEFAULT_URL = 'http://127.0.0.1:3000';

/** Run as the installed `switchyard` bin (its link's name), or from the checkout with `npm run cli`. */
const PROGRAM = path.basename(process.argv[1] ?? '') === 'switchyard' ? 'switchyard' : CHECKOUT_PROGRAM;
const usageFor = (words: readonly string[]) => usageIn(words, PROGRAM);
const synopsisOf = (name: string) => synopsisIn(name, PROGRAM);

/** --url, else SWITCHYARD_URL, else where `npm start` listens; without a trailing slash. */
const apiUrlOf = (flag: string | undefined) => (flag || process.env.SWITCHYARD_URL || DEFAULT_URL).replace(/\/+$/, '');

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
  name: { type: 'string' },
  json: { type: 'boolean' },
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
    const baseUrl = apiUrlOf(values.url);
    if (group === 'watch') return watch(command, { ...values, baseUrl, key, dataDir: DATA_DIR });
    if (group === 'approvals') return approvals(command, { ...values, baseUrl, key, dataDir: DATA_DIR });
    if (group === 'approve') return approve(command, argument, { ...values, baseUrl, key, dataDir: DATA_DIR });
    if (group === 'webhooks') return webhooks(command, positionals.slice(2), { ...values, baseUrl, key, dataDir: DATA_DIR });
    if (group === 'agents') return agents(command, positionals.slice(2), { ...values, baseUrl, key, dataDir: DATA_DIR });
    if (group === 'schedules') return schedules(command, positionals.slice(2), { ...values, baseUrl, key, dataDir: DATA_DIR });
    return batch(command, argument, { ...values, baseUrl, key, dataDir: DATA_DIR });
  }
  if (isAdminCommand(group, command)) return admin(positionals, values);
  return fail(usageFor(positionals));
}

/** `users …` and `keys …`: in the database, or through the running service's admin routes (adminBackendFor). */
async function admin(positionals: string[], values: { url?: string; key?: string; name?: string }): Promise<number> {
  const problem = adminUsageProblem(positionals, PROGRAM);
  if (problem) return fail(problem);
  const config = loadConfig();
  const chosen = await adminBackendFor(values, config);
  if (typeof chosen === 'string') return fail(chosen);
  try {
    return await adminCommand(positionals, values, chosen.backend, { print, fail, program: PROGRAM });
  } catch (error) {
    if (chosen.heldBy && ApiUnreachableError.isInstance(error)) return fail(`${error.message}\n${chosen.heldBy}`);
    throw error;
  } finally {
    await chosen.backend.close();
  }
}

/**
 * Where the admin commands run:
 * 1. --url or SWITCHYARD_URL given: through that service's admin routes, with the admin token;
 * 2. else in the database itself (DATABASE_URL, or the embedded one in DATA_DIR, never made here);
 * 3. but when a running service (`npm start`) holds the embedded database, through its admin
 *    routes at the default URL, with the token `npm start` keeps in DATA_DIR/dev-admin-token.
 * A string: why none can be used. `heldBy`: said when case 3's service does not answer.
 */
async function adminBackendFor(values: { url?: string; key?: string }, config: Config): Promise<{ backend: AdminBackend; heldBy?: string } | string> {
  const givenUrl = values.url || process.env.SWITCHYARD_URL;
  const token = adminTokenForCli(values.key, process.env, config.DATA_DIR);
  const overApi = (url: string) => {
    const baseUrl = url.replace(/\/+$/, '');
    return httpAdmin({ baseUrl, token: token!, fetch: fetchReaching(baseUrl) });
  };
  if (givenUrl) return token ? { backend: overApi(givenUrl) } : noAdminToken(config.DATA_DIR);
  // A DATA_DIR other than the server's would get a new, empty database of its own: never made here.
  if (!config.DATABASE_URL && !embeddedDatabaseExists(config.DATA_DIR)) {
    return (
      `no Switchyard database in DATA_DIR ${config.DATA_DIR} (nothing at ${embeddedDatabaseDir(config.DATA_DIR)}): ` +
      'set DATA_DIR to the one your server uses (or DATABASE_URL), or run `npm start` there once to make it'
    );
  }
  const { DatabaseLockedError, openDb } = require('../src/store/open-db') as typeof import('../src/store/open-db');
  const { migrate } = require('../src/store/migrate') as typeof import('../src/store/migrate');
  const { UsersRepository } = require('../src/store/users-repository') as typeof import('../src/store/users-repository');
  const { databaseAdmin } = require('../src/cli/database-admin') as typeof import('../src/cli/database-admin');
  const { knownToolsForCli } = require('../src/cli/cli-known-tools') as typeof import('../src/cli/cli-known-tools');
  let db: Db;
  try {
    db = await openDb({ databaseUrl: config.DATABASE_URL, schema: config.DATABASE_SCHEMA, dataDir: config.DATA_DIR });
  } catch (error) {
    if (!(error instanceof DatabaseLockedError)) throw error;
    const heldBy = `the embedded database in DATA_DIR ${config.DATA_DIR} is in use by a running service: the users and keys commands go through its API, at ${DEFAULT_URL} unless --url or SWITCHYARD_URL says where`;
    return token ? { backend: overApi(DEFAULT_URL), heldBy } : `${heldBy}, with the admin token, and there is none: ${noAdminToken(config.DATA_DIR)}`;
  }
  await migrate(db);
  const backend = databaseAdmin({
    users: new UsersRepository(db),
    knownTools: () => knownToolsForCli(toolsDirOf(config), process.env),
    announceRevocation: (keyId) => announce(config, keyId),
    close: () => db.close(),
  });
  return { backend };
}

const noAdminToken = (dataDir: string) =>
  `no admin token: pass --key <ADMIN_TOKEN>, set ADMIN_TOKEN, or run \`npm start\` (it keeps one in DATA_DIR/dev-admin-token when ADMIN_TOKEN is unset; there is none in ${dataDir})`;

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
 * (With the embedded defaults the CLI opens the database only while `npm start` is stopped: nothing to tell.)
 */
async function announce(config: Config, keyId: string): Promise<boolean> {
  const { configuredRedisTarget, connectRedis, whenReady } = require('../src/redis/redis-connection') as typeof import('../src/redis/redis-connection');
  const target = configuredRedisTarget(config);
  if (!target) return false;
  const { announceRevocation } = require('../src/auth/revocation-watch') as typeof import('../src/auth/revocation-watch');
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
  json?: boolean;
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
  const baseUrl = apiUrlOf(values.url);
  const { DATA_DIR } = loadConfig();
  const token = values.user ? adminTokenForCli(values.key, process.env, DATA_DIR) : apiKeyForCli(values.key, process.env, DATA_DIR);
  if (!token) return fail(values.user ? `usage --user reads the admin route: ${noAdminToken(DATA_DIR)}` : noKey(DATA_DIR));
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
  const { batchCommand, runBatchFile } = require('../src/batches/batch-cli') as typeof import('../src/batches/batch-cli');
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

async function watch(conversationId: string | undefined, options: ApiCommandOptions): Promise<number> {
  if (!conversationId) return fail(synopsisOf('watch'));
  if (!options.key) return fail(noKey(options.dataDir));
  const after = options.after === undefined ? undefined : Number(options.after);
  if (after !== undefined && !Number.isInteger(after)) return fail('--after must be a seq (an integer)');
  const text = new WatchText();
  const { watchConversation } = require('../src/cli/watch-command') as typeof import('../src/cli/watch-command');
  return watchConversation(conversationId, {
    baseUrl: options.baseUrl,
    key: options.key,
    ...(after === undefined ? {} : { after }),
    print: options.json ? (frame) => print(frame, 0) : (frame) => process.stdout.write(text.frame(frame)),
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
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) return `${errorMessage(error)}\n(${PROGRAM} --help lists the commands and their options)`;
  return errorMessage(error);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`switchyard cli: ${describeFailure(error)}\n`);
    process.exit(1);
  },
);

import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { announceRevocation } from '../src/auth/revocation-watch';
import { SwitchyardClient, type WebSocketConstructor } from '../src/client';
import { batchCommand, runBatchFile } from '../src/batches/batch-cli';
import { loadConfig, type Config } from '../src/config/config';
import { migrate } from '../src/store/migrate';
import { openDb } from '../src/store/open-db';
import { UsersRepository } from '../src/store/users-repository';
import { configuredRedisTarget, connectRedis, whenReady } from '../src/runtime/redis-connection';
import { apiKeyForCli } from '../src/runtime/dev-api-key';

const USAGE = `usage: npm run cli -- <command>
  users create <name>         make a user and print its API key (shown once)
  users list                  list users
  users tools <userId> <a,b|all>
                              limit a user's turns to these tools ("" for none; all lifts the limit)
  keys create <userId>        another API key for a user
  keys revoke <keyId>         revoke a key at once (its open websockets and SSE streams close too)
  batch run <items.jsonl> --out <results.jsonl> [--concurrency N] [--url URL] [--key KEY]
                              run a batch with a progress bar, writing result lines as items end;
                              the same command again resumes it and writes only what is missing
  batch status|cancel|retry|results <batchId> [--url URL] [--key KEY]
  watch <conversationId> [--url http://127.0.0.1:3000] [--key KEY] [--after SEQ]
                              print a conversation's events as they happen (websocket;
                              reconnects and resumes where it was)
The API commands take --key, else SWITCHYARD_API_KEY, else the key \`npm start\` keeps in DATA_DIR.`;

const NO_KEY = 'no API key: pass --key <key>, set SWITCHYARD_API_KEY, or run `npm start` once (it keeps a dev key in DATA_DIR)';

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { url: { type: 'string' }, key: { type: 'string' }, after: { type: 'string' }, out: { type: 'string' }, concurrency: { type: 'string' } },
  });
  const [group, command, argument] = positionals;
  if (group === 'watch' || group === 'batch') {
    const key = apiKeyForCli(values.key, process.env, loadConfig().DATA_DIR);
    if (group === 'watch' && command) return watch(command, { ...values, key });
    if (group === 'batch') return batch(command, argument, { ...values, key });
  }
  if (!group || !command) return fail(USAGE);

  const config = loadConfig();
  const db = await openDb({ databaseUrl: config.DATABASE_URL, schema: config.DATABASE_SCHEMA, dataDir: config.DATA_DIR });
  try {
    await migrate(db);
    const users = new UsersRepository(db);
    switch (`${group} ${command}`) {
      case 'users create':
        if (!argument) return fail('usage: npm run cli -- users create <name>');
        print(await users.createUserWithKey(argument));
        return 0;
      case 'users list':
        print(await users.listUsers());
        return 0;
      case 'users tools': {
        const list = positionals[3];
        if (!argument || list === undefined) return fail('usage: npm run cli -- users tools <userId> <tool,tool|all>');
        const tools = list === 'all' ? null : list.split(',').map((name) => name.trim()).filter(Boolean);
        if (!(await users.setAllowedTools(argument, tools))) return fail(`no user ${argument}`);
        print({ id: argument, allowedTools: tools });
        return 0;
      }
      case 'keys create':
        if (!argument) return fail('usage: npm run cli -- keys create <userId>');
        if (!(await users.getUser(argument))) return fail(`no user ${argument}`);
        print(await users.createApiKey(argument));
        return 0;
      case 'keys revoke':
        if (!argument) return fail('usage: npm run cli -- keys revoke <keyId>');
        await users.revokeApiKey(argument);
        print({ revoked: argument, announced: await announce(config, argument) });
        return 0;
      default:
        return fail(USAGE);
    }
  } finally {
    await db.close();
  }
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

async function batch(command: string | undefined, argument: string | undefined, options: { url?: string; key?: string; out?: string; concurrency?: string }): Promise<number> {
  if (!command || !argument) return fail(USAGE);
  if (!options.key) return fail(NO_KEY);
  const connection = { baseUrl: options.url ?? 'http://127.0.0.1:3000', token: options.key, progress: process.stderr };
  if (command !== 'run') return batchCommand(command, argument, { ...connection, stdout: process.stdout });
  if (!options.out) return fail('batch run needs --out <results.jsonl>');
  const concurrency = options.concurrency === undefined ? undefined : Number(options.concurrency);
  if (concurrency !== undefined && !Number.isInteger(concurrency)) return fail('--concurrency must be an integer');
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  return runBatchFile({ file: argument, out: options.out, ...(concurrency ? { concurrency } : {}) }, { ...connection, signal: stop.signal });
}

/** Follows a conversation with the client library: it reconnects and resumes by seq on its own. */
function watch(conversationId: string, options: { url?: string; key?: string; after?: string }): Promise<number> {
  if (!options.key) return Promise.resolve(fail(NO_KEY));
  const after = options.after === undefined ? undefined : Number(options.after);
  if (after !== undefined && !Number.isInteger(after)) return Promise.resolve(fail('--after must be a seq (an integer)'));
  const client = new SwitchyardClient({
    baseUrl: options.url ?? 'http://127.0.0.1:3000',
    token: options.key,
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    onConnectionChange: (state) => {
      if (state === 'reconnecting') process.stderr.write('connection lost; reconnecting\n');
    },
  });
  return new Promise((resolve) => {
    const subscription = client.subscribe(conversationId, {
      ...(after === undefined ? {} : { after }),
      // Printed as the server takes the subscription, so it comes before the replay's events.
      onSubscribed: () => print({ type: 'subscribed', conversationId, after: subscription.lastSeq ?? null }, 0),
      onEvent: (event) => print({ type: 'event', event }, 0),
      onReload: (conversation) => print({ type: 'reloaded', conversationId, lastSeq: conversation.lastSeq }, 0),
      onError: (error) => {
        client.close();
        resolve(fail(`watch: ${error.message}`));
      },
    });
    process.once('SIGINT', () => {
      client.close();
      resolve(0);
    });
  });
}

function print(value: unknown, indent = 2): void {
  process.stdout.write(`${JSON.stringify(value, null, indent)}\n`);
}

function fail(message: string): number {
  process.stderr.write(`${message}\n`);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`switchyard cli: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);

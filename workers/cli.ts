import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { Redis } from 'ioredis';
import { announceRevocation } from '../src/auth/revocation-watch';
import { loadConfig, type Config } from '../src/config/config';
import { migrate } from '../src/store/migrate';
import { openDb } from '../src/store/open-db';
import { UsersRepository } from '../src/store/users-repository';

const USAGE = `usage: npm run cli -- <command>
  users create <name>         make a user and print its API key (shown once)
  users list                  list users
  users tools <userId> <a,b|all>
                              limit a user's turns to these tools ("" for none; all lifts the limit)
  keys create <userId>        another API key for a user
  keys revoke <keyId>         revoke a key at once (its open websockets and SSE streams close too)
  watch <conversationId> [--url http://127.0.0.1:3000] [--key KEY] [--after SEQ]
                              print a conversation's events as they happen (websocket)`;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { url: { type: 'string' }, key: { type: 'string' }, after: { type: 'string' } },
  });
  const [group, command, argument] = positionals;
  if (group === 'watch' && command) return watch(command, values);
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
 * once; those that miss it find the revocation in the database within KEY_REVOCATION_CHECK_MS.
 * (With the embedded defaults the CLI runs only while `npm start` is stopped: nothing to tell.)
 */
async function announce(config: Config, keyId: string): Promise<boolean> {
  if (!config.REDIS_URL) return false;
  const redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await announceRevocation(redis, config.REDIS_PREFIX, keyId);
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

function watch(conversationId: string, options: { url?: string; key?: string; after?: string }): Promise<number> {
  const url = (options.url ?? 'http://127.0.0.1:3000').replace(/^http/, 'ws') + '/v1/ws';
  if (!options.key) return Promise.resolve(fail('watch needs --key <api key>'));
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${options.key}` } });
  return new Promise((resolve) => {
    socket.on('open', () => {
      const after = options.after === undefined ? {} : { after: Number(options.after) };
      socket.send(JSON.stringify({ type: 'subscribe', conversationId, ...after }));
    });
    socket.on('message', (data) => process.stdout.write(`${String(data)}\n`));
    socket.on('unexpected-response', (_req, res) => resolve(fail(`websocket refused: HTTP ${res.statusCode}`)));
    socket.on('error', (error) => resolve(fail(`websocket error: ${error.message}`)));
    socket.on('close', () => resolve(0));
  });
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
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

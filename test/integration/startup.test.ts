import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { closedPort } from '../support/ports';
import { startPrivateRedis } from '../support/redis-server';
import { runToExit, spawnService } from '../support/processes';
import { uniqueSuffix } from '../support/ids';
import { copyPgliteTemplate } from '../support/template-database';
import { dropRedisPrefix, dropSchema, TEST_POSTGRES_URL } from '../support/services';
import { startTestStack, type TestStack } from '../support/stack';

describe('start-up', () => {
  it('stops on a bad environment value with one line naming it', async () => {
    const result = await runToExit('workers/api.ts', { PORT: 'eighty', DATABASE_URL: 'postgresql://postgres@127.0.0.1/postgres' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^switchyard: invalid configuration: "PORT": /)]);
  });

  it('refuses DATABASE_LISTEN_URL on the embedded database with one line naming it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-listen-'));
    try {
      // Past the configuration, `npm start` would open its database and playground here and stop at the Redis.
      const result = await runToExit('workers/all-in-one.ts', {
        DATABASE_LISTEN_URL: TEST_POSTGRES_URL,
        DATA_DIR: dir,
        PLAYGROUND_DIR: path.join(dir, 'playground'),
        REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
      });
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^switchyard: invalid configuration: "DATABASE_LISTEN_URL": needs DATABASE_URL /)]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('a tool file with credentials in its URL', () => {
    let toolsDir: string;
    let dataDir: string;
    beforeAll(async () => {
      toolsDir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-tools-'));
      // A copy of the run's migrated PGlite for the all-in-one, which opens it before it loads the tools.
      dataDir = (await copyPgliteTemplate()).dataDir;
      const tool = { name: 'leaky', description: 'Carries a password', url: 'https://someone:hunter2@tools.example.com/leaky' };
      await writeFile(path.join(toolsDir, 'leaky.json'), JSON.stringify(tool));
    });
    afterAll(async () => {
      await rm(toolsDir, { recursive: true, force: true });
      await rm(dataDir, { recursive: true, force: true });
    });

    it.each(['workers/api.ts', 'workers/worker.ts', 'workers/all-in-one.ts'])(
      'stops %s with one line naming the file and the field, no stack and no password',
      async (entry) => {
        const suffix = uniqueSuffix();
        const result = await runToExit(entry, {
          ...(entry === 'workers/all-in-one.ts' ? { DATA_DIR: dataDir, PLAYGROUND_DIR: path.join(dataDir, 'playground') } : { DATABASE_URL: TEST_POSTGRES_URL }),
          DATABASE_SCHEMA: `t_${suffix}`,
          REDIS_PREFIX: `test-${suffix}`,
          TOOLS_DIR: toolsDir,
          PORT: '0',
          LOG_LEVEL: 'silent',
        });
        await dropSchema(`t_${suffix}`);
        await dropRedisPrefix(`test-${suffix}`);
        expect(result.code).toBe(1);
        expect(result.stderr.trim().split('\n')).toEqual([
          `switchyard: ${path.join(toolsDir, 'leaky.json')}: "url": must not carry credentials (user:password@), which errors would show; send them in "headers" with a \${ENV_VAR}`,
        ]);
        expect(result.stderr).not.toContain('hunter2');
      },
      60_000,
    );
  });

  it('stops on a models file whose key names an unset variable with one line naming the file and the field, and no secret', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-models-'));
    try {
      const file = path.join(dir, 'models.json');
      const providers = { groq: { baseURL: 'https://api.groq.com/openai/v1', apiKey: '${GROQ_KEY_NOT_SET}', headers: { 'X-Team': 'hunter2' } } };
      await writeFile(file, JSON.stringify({ providers, models: { fast: { targets: [{ provider: 'groq', model: 'llama' }] } } }));
      const result = await runToExit('workers/worker.ts', { DATABASE_URL: TEST_POSTGRES_URL, MODELS_FILE: file, PORT: '0', LOG_LEVEL: 'silent' });
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([`switchyard: models file ${file}: "providers.groq.apiKey": environment variable "GROQ_KEY_NOT_SET" is not set`]);
      expect(result.stderr + result.stdout).not.toContain('hunter2');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('stops with one line when DATA_DIR cannot be made, naming the path', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-file-'));
    try {
      await writeFile(path.join(dir, 'a-file'), 'not a folder');
      const dataDir = path.join(dir, 'a-file', 'data');
      const result = await runToExit('workers/all-in-one.ts', { DATA_DIR: dataDir, PLAYGROUND_DIR: path.join(dir, 'playground'), PORT: '0', LOG_LEVEL: 'silent' });
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^switchyard: could not start: ENOTDIR: not a directory, mkdir '${dataDir}`))]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('stops with one line naming HOST when it does not resolve', async () => {
    const result = await runToExit('workers/api.ts', { DATABASE_URL: TEST_POSTGRES_URL, HOST: 'no-such-host.invalid', PORT: '0', LOG_LEVEL: 'silent' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual(['switchyard: HOST no-such-host.invalid does not resolve: set HOST to an address of this machine (127.0.0.1, 0.0.0.0)']);
  });

  it('tells the operator that separate processes need DATABASE_URL', async () => {
    const result = await runToExit('workers/worker.ts', {});
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('set DATABASE_URL');
  });

  it('says once which Redis did not answer, why, and what to do (the password left out)', async () => {
    const port = await closedPort();
    const result = await runToExit('workers/api.ts', { DATABASE_URL: TEST_POSTGRES_URL, REDIS_URL: `redis://:hunter2@127.0.0.1:${port}`, LOG_LEVEL: 'info' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      `switchyard: Redis at redis://:***@127.0.0.1:${port} did not answer: connection refused (is it running, on that host and port?). Start it, or set REDIS_URL to a Redis that runs`,
    ]);
    expect(result.stdout).toBe('');
  });

  it('says once which PostgreSQL did not answer, why, and what to do', async () => {
    const port = await closedPort();
    const result = await runToExit('workers/worker.ts', { DATABASE_URL: `postgresql://postgres:hunter2@127.0.0.1:${port}/postgres`, LOG_LEVEL: 'info' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^switchyard: PostgreSQL at postgresql://postgres:\\*\\*\\*@127\\.0\\.0\\.1:${port}/postgres did not answer: connection refused`)),
    ]);
    expect(result.stdout).toBe('');
  });

  it('says once that Redis timed out when it accepts the connection and never answers', async () => {
    await withSilentServer(async (port) => {
      const result = await runToExit('workers/api.ts', { DATABASE_URL: TEST_POSTGRES_URL, REDIS_URL: `redis://127.0.0.1:${port}`, LOG_LEVEL: 'info' });
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^switchyard: Redis at redis://127\\.0\\.0\\.1:${port} did not answer: timed out`))]);
    });
  }, 60_000);

  it('says once that PostgreSQL timed out when it accepts the connection and never answers', async () => {
    await withSilentServer(async (port) => {
      const result = await runToExit('workers/worker.ts', { DATABASE_URL: `postgresql://postgres@127.0.0.1:${port}/postgres`, LOG_LEVEL: 'info' });
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(new RegExp(`^switchyard: PostgreSQL at postgresql://postgres@127\\.0\\.0\\.1:${port}/postgres did not answer: timed out`)),
      ]);
    });
  }, 60_000);

  it('says once that PostgreSQL has no such database, and that the URL is the fix', async () => {
    const url = new URL(TEST_POSTGRES_URL);
    url.password = 'hunter2';
    url.pathname = '/no_such_database';
    const result = await runToExit('workers/worker.ts', { DATABASE_URL: url.toString(), LOG_LEVEL: 'info' });
    expect(result.code).toBe(1);
    url.password = '***';
    expect(result.stderr.trim().split('\n')).toEqual([
      `switchyard: PostgreSQL at ${url.toString()} refused the connection: the database does not exist (create it, or name another in the URL)`,
    ]);
  }, 60_000);

  it('says once that Redis refused the password', async () => {
    const redis = await startPrivateRedis();
    const admin = new Redis(redis.url);
    try {
      await admin.config('SET', 'requirepass', 'right-password');
      const result = await runToExit('workers/api.ts', { DATABASE_URL: TEST_POSTGRES_URL, REDIS_URL: `redis://:wrong-password@127.0.0.1:${redis.port}`, LOG_LEVEL: 'info' });
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([
        `switchyard: Redis at redis://:***@127.0.0.1:${redis.port} refused the connection: authentication failed (check the user and password in the URL)`,
      ]);
      expect(result.stderr).not.toContain('wrong-password');
    } finally {
      admin.disconnect();
      await redis.close();
    }
  }, 60_000);
});

/** Runs `body` with a TCP server that accepts connections and never sends a byte. */
async function withSilentServer(body: (port: number) => Promise<void>): Promise<void> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await body((server.address() as net.AddressInfo).port);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * Packages a start does not need, each loaded beside its only user when first needed: the
 * provider's SDK and its HTTP client (undici, which webhook deliveries use too) at the first
 * request, Ajv at the first schema compile (the builtins' schemas at their first check),
 * @opentelemetry/core when a trace crosses a job, pino-pretty for LOG_FORMAT=pretty only.
 */
const LOADED_WHEN_NEEDED = ['openai', 'undici', 'ajv', '@opentelemetry/core', 'pino-pretty'];

describe('what a start loads', () => {
  let stack: TestStack;
  let dir: string;
  beforeAll(async () => {
    stack = await startTestStack({ workers: 0 });
    dir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-loaded-'));
  });
  afterAll(async () => {
    await stack?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each(['api', 'worker'] as const)(
    `npm run %s starts and stops without loading ${LOADED_WHEN_NEEDED.join(', ')}`,
    async (kind) => {
      const file = path.join(dir, `${kind}.json`);
      const hook = path.join(__dirname, '..', 'support', 'loaded-packages-hook.js');
      const service = await spawnService(kind, stack.childEnv({ NODE_OPTIONS: `--require ${hook}`, SWITCHYARD_LOADED_PACKAGES_FILE: file }));
      await service.kill();
      const loaded = JSON.parse(await readFile(file, 'utf8')) as string[];
      expect(loaded).toEqual(expect.arrayContaining(['express', 'bullmq', 'zod']));
      expect(loaded.filter((name) => LOADED_WHEN_NEEDED.includes(name))).toEqual([]);
    },
    60_000,
  );
});

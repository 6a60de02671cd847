import path from 'node:path';
import { z } from 'zod';
import { StartupError } from '../errors/startup-error';
import { describeZodIssues } from '../errors/zod-issues';

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const url = z.string().url();
const optionalUrl = z.preprocess((v) => (v === '' ? undefined : v), url.optional());
/** `host:port` parses as a URL with the scheme `host`: an HTTP endpoint names its scheme. */
const optionalHttpUrl = z.preprocess((v) => (v === '' ? undefined : v), url.regex(/^https?:\/\//i, 'an http:// or https:// URL').optional());

/**
 * Every setting of Switchyard. This module is the only reader of `process.env`; the rest of
 * the code gets a frozen {@link Config} passed in.
 */
export const configSchema = z
  .object({
    /** Where the API and websocket gateway listen (a worker serves `/healthz` and `/metrics` there); `0` picks a free port. */
    PORT: port.default(3000),
    /** The address the API and websocket gateway (or a worker's `/healthz` and `/metrics`) listen on. */
    HOST: z.string().min(1).default('127.0.0.1'),
    /** PostgreSQL connection string; required by `npm run api` / `npm run worker`. Unset: the embedded PGlite in `DATA_DIR/db`. */
    DATABASE_URL: optionalUrl,
    /**
     * The PostgreSQL connection that LISTENs for webhook wakeups, and only it. Default
     * DATABASE_URL; a direct URL where DATABASE_URL goes through a pooler in transaction mode,
     * which does not keep a session's LISTEN.
     */
    DATABASE_LISTEN_URL: optionalUrl,
    /** PostgreSQL schema holding Switchyard's tables; tests give each run its own. */
    DATABASE_SCHEMA: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'lower-case letters, digits and _')
      .default('public'),
    /** Redis connection string (a `/N` database number is honoured); its `maxmemory-policy` must be `noeviction`. Unset: `redis://127.0.0.1:6379`, started from the PATH if nothing answers. */
    REDIS_URL: optionalUrl,
    /**
     * `host:port,host:port,…`: some nodes of a Redis Cluster (the rest are discovered). Set, it
     * is used instead of REDIS_URL, and BullMQ's keys take the hash tag `{REDIS_PREFIX}`.
     */
    REDIS_CLUSTER_NODES: z.preprocess(
      (v) => (v === '' ? undefined : v),
      z
        .string()
        .transform((value) =>
          value
            .split(',')
            .map((entry) => entry.trim())
            .filter(Boolean),
        )
        .pipe(z.array(z.string().regex(/^[^\s:,]+:\d{1,5}$/, 'host:port,host:port,…')).min(1, 'host:port,host:port,…'))
        .transform((entries) =>
          entries.map((entry) => {
            const at = entry.lastIndexOf(':');
            return { host: entry.slice(0, at), port: Number(entry.slice(at + 1)) };
          }),
        )
        .optional(),
    ),
    /** Prefix of every Redis key and BullMQ queue; lets several deployments or tests share one Redis. */
    REDIS_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/)
      .default('switchyard'),
    /** The OpenAI-compatible provider, called as it is (no redirect followed, no compressed answer asked for). Unset: the scripted model. */
    LLM_BASE_URL: optionalUrl,
    /** The LLM_BASE_URL provider's API key. */
    LLM_API_KEY: z.string().optional(),
    /** The default model of the LLM_* provider. */
    LLM_MODEL: z.string().min(1).default('scripted'),
    /** The LLM_* provider's context window, in tokens (GET /v1/models; a larger target takes a step that overflows a smaller one). */
    LLM_CONTEXT_WINDOW: z.preprocess((v) => (v === '' ? undefined : v), positiveInt.optional()),
    /** The LLM_* provider's price, `input,cachedInput,output` in USD per million tokens. */
    LLM_PRICE: z.preprocess(
      (v) => (v === '' ? undefined : v),
      z
        .string()
        .regex(/^\s*\d+(\.\d+)?\s*,\s*\d+(\.\d+)?\s*,\s*\d+(\.\d+)?\s*$/, 'input,cachedInput,output (USD per million tokens, e.g. 0.15,0.075,0.6)')
        .transform((value) => {
          const [input, cachedInput, output] = value.split(',').map((each) => Number(each.trim())) as [number, number, number];
          return { input, cachedInput, output };
        })
        .optional(),
    ),
    /**
     * A JSON file of providers, models, fallbacks and prices (docs/API.md, "Models and
     * providers"). Unset: `./models.json` when it exists, else the LLM_* provider alone.
     */
    MODELS_FILE: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
    /** The first cooldown of a target that failed; doubled while it keeps failing, up to PROVIDER_COOLDOWN_MAX_MS. A `Retry-After` wins. */
    PROVIDER_COOLDOWN_BASE_MS: positiveInt.default(1000),
    /** The longest cooldown of a target that keeps failing (see PROVIDER_COOLDOWN_BASE_MS). */
    PROVIDER_COOLDOWN_MAX_MS: positiveInt.default(60_000),
    /** Folder of `http`/`client` tool JSON files and `mcp.json` (`npm start`: `examples/tools`). */
    TOOLS_DIR: z.string().default('./tools'),
    /** Tool names (a comma list) whose calls wait for a person's approval: how builtins are gated, and any other tool besides its own declaration. */
    APPROVAL_REQUIRED_TOOLS: z
      .string()
      .default('')
      .transform((value) =>
        value
          .split(',')
          .map((entry) => entry.trim())
          .filter(Boolean),
      ),
    /** Where `npm run build` / `npm start` put the playground bundle, which the API serves at `/`. */
    PLAYGROUND_DIR: z.string().default('./dist/playground'),
    /** Enables the admin routes (at least 16 characters). Unset: the admin routes answer 404, except under `npm start`, which makes one and keeps it in DATA_DIR/dev-admin-token (mode 0600). */
    ADMIN_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
    /** Comma-separated Origins allowed for browser websocket clients and CORS on every route under `/v1` and `/api` (`*` for any); another Origin is refused (403) naming this variable. */
    ALLOWED_ORIGINS: z.string().optional(),
    /** Where embedded data lives (PGlite's database, the dev API key, the started Redis). */
    DATA_DIR: z.string().default('./.switchyard'),
    /** pino level (`fatal` … `trace`, `silent`). */
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /**
     * `json`: one JSON object a line, for a log collector (`npm run api` / `worker`); `pretty`:
     * one readable line an entry, for a terminal (`npm start` defaults to it).
     */
    LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
    /** Largest accepted request body. */
    MAX_BODY_BYTES: positiveInt.default(1024 * 1024),
    /**
     * The largest `POST /api/chat` body: the AI SDK's default transport resends the whole UI
     * history with every message (Switchyard reads only the last one), so a chat outgrows
     * MAX_BODY_BYTES long before any single message does.
     */
    MAX_CHAT_BODY_BYTES: positiveInt.default(16 * 1024 * 1024),
    /**
     * The longest a request (headers and body) may take to arrive; past it the API answers 408
     * and closes the connection, so a client that declares a body and stalls holds no socket.
     */
    REQUEST_TIMEOUT_MS: positiveInt.default(60_000),
    /**
     * How long an idle keep-alive connection stays open. Longer than the idle timeout of a load
     * balancer in front (60 s on AWS's), or the balancer reuses a connection the API has just
     * closed and answers its client 502; Node's own default is 5 s.
     */
    KEEP_ALIVE_TIMEOUT_MS: positiveInt.default(65_000),
    /** The largest batch submission (`POST /v1/batches`), and the most items one may hold. */
    MAX_BATCH_BYTES: positiveInt.default(64 * 1024 * 1024),
    /** A file uploaded to `/openai/v1/files` (streamed to storage in 1 MiB chunks, never held whole). OpenAI's own batch input limit. */
    OPENAI_MAX_FILE_BYTES: positiveInt.default(200 * 1024 * 1024),
    /**
     * Days a conversation made by `/openai/v1` (Responses, Chat Completions, Conversations) is
     * kept after its last turn, as OpenAI keeps responses; then it is deleted like
     * `DELETE /v1/conversations/:id` (the usage ledger keeps its rows). `0` keeps them.
     */
    OPENAI_RETENTION_DAYS: z.coerce.number().int().min(0).default(30),
    /** Most items in one batch submission (400 past it). */
    MAX_BATCH_ITEMS: positiveInt.default(50_000),
    /**
     * What the API parses whole of a batch: a JSON body, and each line of a JSONL body (which is
     * streamed into the database line by line, up to MAX_BATCH_BYTES). Bounds the memory one
     * submission takes.
     */
    MAX_BATCH_JSON_BYTES: positiveInt.default(8 * 1024 * 1024),
    /** Batch submissions one API process reads at once; more answer 503 with Retry-After before their body is read. */
    MAX_BATCH_SUBMISSIONS_IN_FLIGHT: positiveInt.default(4),
    /**
     * Bytes of the bodies of `POST /openai/v1/responses` and `POST /api/chat` (requests that stay
     * open for their turn) one API process reads and stores at once, each counted by its declared
     * length (a chunked one by its route's limit) until what it asks is stored, not while it
     * waits or streams. One that does not fit answers 503 with Retry-After before its body is read.
     */
    MAX_TURN_BODY_BYTES_IN_FLIGHT: positiveInt.default(32 * 1024 * 1024),
    /** The largest websocket frame a client may send; a larger one closes the connection with 1009 (API.md). */
    WS_MAX_FRAME_BYTES: positiveInt.default(64 * 1024),
    /** A client whose unsent backlog passes this is disconnected; it resumes by `seq`. */
    WS_MAX_BUFFERED_BYTES: positiveInt.default(4 * 1024 * 1024),
    /** Websocket ping interval; a peer that misses a pong is dropped at the next one. */
    WS_HEARTBEAT_MS: positiveInt.default(30_000),
    /**
     * A comment line on idle server-sent-event streams (keeps proxies from closing them); a reader
     * more than WS_MAX_BUFFERED_BYTES behind that took nothing between two of them is cut off.
     */
    SSE_HEARTBEAT_MS: positiveInt.default(15_000),
    /**
     * Open websockets one API key may hold on one API process (tickets and session tokens count
     * against the key they were got with); one more handshake answers 429 before the upgrade.
     * Sized to all of a key's websockets, not a share per process: when an API process dies, its
     * clients all reconnect to the others (docs/API.md).
     */
    WS_MAX_CONNECTIONS_PER_KEY: positiveInt.default(100),
    /** Default lifetime of a session token (POST /v1/session-tokens). */
    SESSION_TOKEN_TTL_SECONDS: positiveInt.max(86_400).default(900),
    /** How often each API process checks its open websockets and SSE streams for revoked keys. */
    KEY_REVOCATION_CHECK_MS: positiveInt.default(2000),
    /**
     * How long an API process trusts an API key it verified (and a session token's or ticket's
     * key) without asking the database again; 0 asks on every request. A revocation announced
     * over Redis empties the cache at once, so this bounds only a revocation the process missed.
     */
    API_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).default(5000),
    /** Events kept per conversation in the Redis replay log. */
    EVENT_LOG_MAX_LENGTH: positiveInt.default(10_000),
    /** Seconds a conversation's replay log is kept after its last event. */
    EVENT_LOG_TTL_SECONDS: positiveInt.default(24 * 3600),
    /**
     * The longest a turn's deltas gather before they are appended together while many answers
     * stream in a worker process (0.2 ms per answer streaming, up to this; one answer alone never
     * waits, nor does the first delta of a step); 0 appends them as fast as Redis takes them.
     */
    DELTA_PACING_MAX_MS: z.coerce.number().int().min(0).max(1000).default(20),
    /**
     * How long, each time round its event loop, a worker process reads the answers already
     * streaming before the rest (new turns' admission, take and first request) goes first; a
     * step's first output is never held back. 0 reads them as they come.
     */
    STREAM_READ_SLICE_MS: z.coerce.number().int().min(0).max(1000).default(2),
    /** Turn jobs one worker process runs at once (they mostly wait on the provider). */
    WORKER_CONCURRENCY: positiveInt.default(50),
    /**
     * In a process that is both API and worker (`npm start`, the all-in-one), a turn its API
     * admits starts at once in a free slot of its own WORKER_CONCURRENCY instead of waiting for
     * the queue to hand its job out; the job is still added, delayed, as the run's lease, and any
     * worker takes the turn over should the process die. `false` enqueues every turn.
     */
    LOCAL_TURN_STARTS: z
      .enum(['true', 'false'])
      .default('true')
      .transform((value) => value === 'true'),
    /**
     * Batch item turns one worker process starts at once, in slots of their own beside those:
     * a batch never fills the slots interactive turns start in. The default runs one batch at
     * its default concurrency on one worker; turns that are CPU for this machine (a fast local
     * model) want 1-2, so that interactive turns keep their first token while a batch runs.
     */
    BATCH_TURNS_PER_WORKER: positiveInt.default(8),
    /** BullMQ lock: a worker that stops renewing it for this long loses its job. */
    LOCK_DURATION_MS: positiveInt.default(10_000),
    /** How often BullMQ looks for jobs whose lock expired. */
    STALLED_INTERVAL_MS: positiveInt.default(5_000),
    /** A provider stream with no chunk for this long is aborted and retried. */
    PROVIDER_IDLE_TIMEOUT_MS: positiveInt.default(60_000),
    /** Times a turn's job may be taken back from a worker that stopped renewing its lock before the turn fails as `stalled`. */
    MAX_STALLED_COUNT: positiveInt.default(2),
    /** Completions per turn when the turn does not say. */
    DEFAULT_MAX_STEPS: positiveInt.default(8),
    /**
     * Stored messages a turn sends when it does not say (`maxHistoryMessages`): the most recent,
     * from a user message on, and always all of the turn's own. Unset: the whole history.
     */
    MAX_HISTORY_MESSAGES: z.preprocess((v) => (v === '' ? undefined : v), positiveInt.optional()),
    /** Tool calls run per step; the model's calls past it get an error result. */
    MAX_TOOL_CALLS_PER_STEP: positiveInt.default(32),
    /** Provider failures (429, 5xx, broken streams) retried per turn before it fails with `retries_exhausted`. */
    PROVIDER_MAX_RETRIES: z.coerce.number().int().min(0).default(5),
    /** First retry delay; doubled each retry (with jitter) up to PROVIDER_RETRY_MAX_MS, or the provider's Retry-After if longer. */
    PROVIDER_RETRY_BASE_MS: positiveInt.default(500),
    /** The longest backoff between provider retries (see PROVIDER_RETRY_BASE_MS; a longer `Retry-After` wins). */
    PROVIDER_RETRY_MAX_MS: positiveInt.default(30_000),
    /** The longest provider `Retry-After` a turn waits out (without holding a worker); a longer one fails the turn. */
    PROVIDER_MAX_RETRY_AFTER_MS: positiveInt.default(15 * 60_000),
    /** Unfinished turns (queued, running, waiting) one user may have; more answer 429. */
    MAX_ACTIVE_TURNS_PER_USER: positiveInt.default(1000),
    /** Authenticated API requests one user may make per minute; more answer 429 with Retry-After. */
    RATE_LIMIT_PER_MINUTE: positiveInt.default(1200),
    /**
     * Requests with a missing or wrong key one client address may make per minute; past it the
     * address is answered 429 before any lookup, so a flood of bad keys costs no database work.
     */
    AUTH_FAILURES_PER_MINUTE: positiveInt.default(30),
    /**
     * Which proxies' X-Forwarded-For to believe for the client address (express's `trust proxy`):
     * `false` (the socket's address), `true`, a hop count, or addresses and subnets
     * (`loopback, 10.0.0.0/8`).
     */
    TRUST_PROXY: z
      .string()
      .default('false')
      .transform((value): boolean | number | string[] => {
        if (value === 'true' || value === 'false') return value === 'true';
        if (/^\d+$/.test(value)) return Number(value);
        return value
          .split(',')
          .map((entry) => entry.trim())
          .filter(Boolean);
      }),
    /** How often workers look in PostgreSQL for unfinished turns without a job (after a Redis loss). */
    RECONCILE_INTERVAL_MS: positiveInt.default(15_000),
    /** Turns one reconciler pass checks at most; the next pass goes on from there. */
    RECONCILE_MAX_TURNS_PER_PASS: positiveInt.default(1000),
    /** PostgreSQL connections per process. */
    DATABASE_POOL_SIZE: positiveInt.default(20),
    /**
     * A PostgreSQL query with no answer for this long fails (503 in the API, a retried job in a
     * worker) and its connection is dropped: a hung server or a network that drops packets
     * must not hold requests forever. Every query of Switchyard is short.
     */
    DATABASE_QUERY_TIMEOUT_MS: positiveInt.default(10_000),
    /**
     * Statements prepared once per connection (PostgreSQL plans each once instead of on every
     * call). `false` for a PgBouncer in transaction mode older than 1.21, which cannot carry them.
     */
    DATABASE_PREPARED_STATEMENTS: z
      .enum(['true', 'false'])
      .default('true')
      .transform((value) => value === 'true'),
    /**
     * A command on the fail-fast Redis connection (the API's enqueues, rate limits and
     * tickets) with no answer for this long fails, so a hung Redis answers 503 rather than
     * hanging. Workers' connections wait outages out and have no such limit.
     */
    REDIS_COMMAND_TIMEOUT_MS: positiveInt.default(3_000),
    /** On SIGTERM, how long active jobs may finish before they are handed back. */
    SHUTDOWN_GRACE_MS: positiveInt.default(10_000),
    /** Lifetime of a single-use websocket ticket. */
    WS_TICKET_TTL_SECONDS: positiveInt.default(60),
    /**
     * Where OpenTelemetry traces go (OTLP/HTTP, spans sent to `<endpoint>/v1/traces`). Unset: no
     * SDK is started and every span call is a no-op. The SDK reads the other standard variables
     * itself (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_BSP_*`,
     * `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`).
     */
    OTEL_EXPORTER_OTLP_ENDPOINT: optionalHttpUrl,
    /**
     * Webhook URLs whose host resolves to a loopback, private or link-local address are refused
     * unless this is `true` (development, tests): a user must not make the service call inside.
     */
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: z
      .enum(['true', 'false'])
      .default('false')
      .transform((value) => value === 'true'),
    /**
     * The key webhook endpoint secrets are encrypted with in the database (any string of 32+
     * characters, e.g. `openssl rand -base64 32`). Unset, a key derived from the deployment id is
     * used, which lives in the same database: set it wherever the database may be copied.
     */
    WEBHOOK_SECRET_KEY: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(32, 'at least 32 characters').optional()),
    /** How long one delivery attempt may take, connecting to the last byte read. */
    WEBHOOK_TIMEOUT_MS: positiveInt.default(10_000),
    /**
     * The waits between a delivery's attempts, comma-separated: the first after the 1st failure,
     * and so on; the last repeats until WEBHOOK_RETRY_FOR_MS after the event (or its redeliver). Default: 5 s, 30 s,
     * 2 min, 10 min, 30 min, then hourly (each ±10 %).
     */
    WEBHOOK_RETRY_DELAYS_MS: z
      .string()
      .default('5000,30000,120000,600000,1800000,3600000')
      .transform((value) => value.split(',').map((each) => Number(each.trim())))
      .pipe(z.array(z.number().int('whole milliseconds, comma-separated').positive()).min(1, 'at least one delay')),
    /** How long after its event, or after the redeliver that sent it again, a delivery is still tried; then it is marked failed. */
    WEBHOOK_RETRY_FOR_MS: positiveInt.default(24 * 3600_000),
    /** An endpoint every attempt of which has failed for this long is disabled. */
    WEBHOOK_DISABLE_AFTER_MS: positiveInt.default(3 * 24 * 3600_000),
    /** How often each worker looks for recorded webhook events that have no delivery job yet. */
    WEBHOOK_RELAY_INTERVAL_MS: positiveInt.default(1000),
    /** Delivery attempts one worker process makes at once. */
    WEBHOOK_CONCURRENCY: positiveInt.default(20),
    /**
     * Delivery attempts to one endpoint one worker process makes at once; another waits for a free
     * slot without counting as an attempt. An endpoint that never answers then holds this many of
     * WEBHOOK_CONCURRENCY's slots, not all of them, and other users' webhooks go on.
     */
    WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: positiveInt.default(4),
    /**
     * Endpoints one user may register: each is a delivery row written in the commit of every turn's
     * end and a request to a URL the user chose, and `GET /v1/webhooks` lists them all unpaged.
     */
    WEBHOOK_MAX_ENDPOINTS_PER_USER: positiveInt.default(20),
  })
  // A listen URL without DATABASE_URL means a PostgreSQL was meant: the embedded database, which
  // listens on itself, would take the data instead.
  .refine((env) => !env.DATABASE_LISTEN_URL || env.DATABASE_URL, {
    path: ['DATABASE_LISTEN_URL'],
    message: 'needs DATABASE_URL (the embedded database listens on itself): set DATABASE_URL too, or unset DATABASE_LISTEN_URL',
  })
  .transform((env) => ({
    ...env,
    DATABASE_LISTEN_URL: env.DATABASE_LISTEN_URL ?? env.DATABASE_URL,
    DATA_DIR: path.resolve(env.DATA_DIR),
    TOOLS_DIR: path.resolve(env.TOOLS_DIR),
    PLAYGROUND_DIR: path.resolve(env.PLAYGROUND_DIR),
    ALLOWED_ORIGINS: env.ALLOWED_ORIGINS
      ? env.ALLOWED_ORIGINS.split(',')
          .map((origin) => origin.trim())
          .filter(Boolean)
      : [],
  }));

export type Config = Readonly<z.infer<typeof configSchema>>;

/** The environment variables Switchyard reads: anything else in the environment is not ours. */
export const CONFIG_KEYS: readonly string[] = Object.keys(configSchema.in.shape);

export class ConfigError extends StartupError {
  override readonly code = 'invalid_config';
}

/** Parses an environment; the error message is one line naming the variable and the problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Record<string, string> = {}): Config {
  const parsed = configSchema.safeParse({ ...pickDefined(env), ...overrides });
  if (!parsed.success) {
    // One line, about the first problem: the operator fixes one variable at a time.
    throw new ConfigError(`invalid configuration: ${describeZodIssues(parsed.error.issues.slice(0, 1))}`);
  }
  return Object.freeze(parsed.data);
}

function pickDefined(env: NodeJS.ProcessEnv): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const key of CONFIG_KEYS) {
    const value = env[key];
    if (value !== undefined) picked[key] = value;
  }
  return picked;
}

/** The environment that `${VAR}` references of a models file (keys, headers) may read. */
export function modelsFileEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string | undefined> {
  return { ...env };
}

/**
 * The environment that `${VAR}` references in http tool headers may read. Kept here so that
 * this module stays the only reader of `process.env`.
 */
export function toolHeaderEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string | undefined> {
  return { ...env };
}

import { spawn, type ChildProcess } from 'node:child_process';
import Module from 'node:module';
import path from 'node:path';
import readline from 'node:readline';

const ROOT = path.resolve(__dirname, '../..');

/** The environment variable through which the global set-up hands the run's compile cache directory to the test files. */
export const COMPILE_CACHE_DIR = 'SWITCHYARD_TEST_COMPILE_CACHE_DIR';

/**
 * Runs one of the project's entry points (`workers/*.ts`) as a child process, output piped: the
 * compiled `dist/workers/*.js` that the suite's global set-up built once for the run (the build
 * `npm run api` and the image run), with plain node, and the run's V8 code cache (`compileCache`).
 */
export function spawnEntry(entry: string, env: Record<string, string>, args: string[] = []) {
  const cache = compileCache();
  return spawn(process.execPath, [...cache.nodeArgs, compiledEntry(entry), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...cache.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * The run's compile cache (the directory the global set-up made, COMPILE_CACHE_DIR) for a child:
 * Node's own where it has one (22.1 on, NODE_COMPILE_CACHE), else test/support/compile-cache-hook.js.
 * Without the directory (a file run without the set-up), none.
 */
function compileCache(): { nodeArgs: string[]; env: Record<string, string> } {
  const dir = process.env[COMPILE_CACHE_DIR];
  if (!dir) return { nodeArgs: [], env: {} };
  if ('enableCompileCache' in Module) return { nodeArgs: [], env: { NODE_COMPILE_CACHE: dir } };
  return { nodeArgs: ['--require', path.join(__dirname, 'compile-cache-hook.js')], env: { SWITCHYARD_COMPILE_CACHE_DIR: dir } };
}

/** `workers/api.ts` → `<root>/dist/workers/api.js`. */
function compiledEntry(entry: string): string {
  return path.join(ROOT, 'dist', entry.replace(/\.ts$/, '.js'));
}

export interface ServiceProcess {
  child: ChildProcess;
  /** The port it serves (API and gateway, or a worker's /healthz and /metrics). */
  port: number;
  url: string;
  /** Everything it wrote so far (its structured logs are on stdout). */
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** Sends a signal and waits for the exit (SIGTERM by default). */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
  /** Sends a signal without waiting (SIGSTOP, SIGCONT). */
  signal(signal: NodeJS.Signals): void;
  /**
   * Resolves with the first JSON log line (already written or future) that matches; rejects after
   * `timeoutMs` (default 20000), or at once when `signal` aborts (a wait that another one made moot).
   */
  waitForLog(predicate: (entry: Record<string, any>) => boolean, timeoutMs?: number, signal?: AbortSignal): Promise<Record<string, any>>;
}

export interface SpawnOptions {
  /** Default `info` (the "started" line the start-up waits for is logged at info). */
  logLevel?: 'info' | 'debug' | 'trace';
}

/**
 * Starts `npm run api` / `npm run worker` as a real child process and waits for its
 * "started" log line, which carries the port it bound (PORT=0).
 */
export function spawnService(kind: 'api' | 'worker', env: Record<string, string>, options: SpawnOptions = {}): Promise<ServiceProcess> {
  const child = spawnEntry(`workers/${kind}.ts`, { ...env, PORT: '0', LOG_LEVEL: options.logLevel ?? 'info' });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  child.stdout!.on('data', (chunk) => (stdout += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const entries: Record<string, any>[] = [];
  let logWaiters: { predicate: (entry: Record<string, any>) => boolean; resolve: (entry: Record<string, any>) => void }[] = [];
  const waitForLog = (predicate: (entry: Record<string, any>) => boolean, timeoutMs = 20_000, signal?: AbortSignal) => {
    const seen = entries.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise<Record<string, any>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${kind}: no matching log line within ${timeoutMs} ms`)), timeoutMs);
      const abort = () => {
        clearTimeout(timer);
        logWaiters = logWaiters.filter((waiter) => waiter.predicate !== predicate);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', abort, { once: true });
      logWaiters.push({
        predicate,
        resolve: (entry) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', abort);
          resolve(entry);
        },
      });
    });
  };
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      let entry: { msg?: string; url?: string; port?: number };
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      entries.push(entry);
      logWaiters = logWaiters.filter((waiter) => {
        if (!waiter.predicate(entry)) return true;
        waiter.resolve(entry);
        return false;
      });
      if (entry.msg !== `${kind} started`) return;
      const port = entry.port ?? Number(new URL(entry.url!).port);
      resolve({
        child,
        port,
        url: `http://127.0.0.1:${port}`,
        stdout: () => stdout,
        stderr: () => stderr,
        exited,
        kill(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
        signal(signal) {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        },
        waitForLog,
      });
    });
    void exited.then((code) => reject(new Error(`${kind} exited with ${code} before starting: ${stderr}`)));
  });
}

/** API and worker processes side by side on one environment, started at once (the APIs first in the list). */
export function spawnServices(env: Record<string, string>, counts: { apis: number; workers: number }): Promise<ServiceProcess[]> {
  const kinds = [...Array<'api'>(counts.apis).fill('api'), ...Array<'worker'>(counts.workers).fill('worker')];
  return Promise.all(kinds.map((kind) => spawnService(kind, env)));
}

/** The worker among `workers` that logged starting `turnId` (the one to kill to cut that turn). */
export async function workerThatStarted(workers: ServiceProcess[], turnId: string, timeoutMs = 10_000): Promise<ServiceProcess> {
  const found = new AbortController();
  try {
    return await Promise.any(
      workers.map(async (worker) => {
        await worker.waitForLog((entry) => entry.msg === 'turn started' && entry.turnId === turnId, timeoutMs, found.signal);
        return worker;
      }),
    );
  } finally {
    // The other workers' waits would hold their timers to the end.
    found.abort();
  }
}

/** Runs an entry point to its end; for tests of start-up failures. */
export function runToExit(entry: string, env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawnEntry(entry, env, args);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr, stdout })));
}

export interface AllInOneProcess {
  child: ChildProcess;
  /** What its banner says: the API's URL, the dev API key, the Redis and the database lines. */
  url: string;
  apiKey: string;
  redis: string;
  database: string;
  stdout: () => string;
  /** Resolves once its stdout (so far or later) holds `text`; rejects after `timeoutMs` (default 20000). */
  waitForOutput(text: string, timeoutMs?: number): Promise<void>;
  /** SIGTERM (or `signal`), and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `npm start`'s entry point (workers/all-in-one.ts) as a child process and waits for its
 * banner. Give it a DATA_DIR and a PLAYGROUND_DIR of the test's own.
 */
export function spawnAllInOne(env: Record<string, string>): Promise<AllInOneProcess> {
  const child = spawnEntry('workers/all-in-one.ts', { PORT: '0', ...env });
  let stdout = '';
  let stderr = '';
  let waiters: { text: string; resolve: () => void }[] = [];
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  child.stdout!.on('data', (chunk) => {
    stdout += String(chunk);
    waiters = waiters.filter((waiter) => {
      if (!stdout.includes(waiter.text)) return true;
      waiter.resolve();
      return false;
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitForOutput = (text: string, timeoutMs = 20_000) =>
    stdout.includes(text)
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`all-in-one: no "${text}" in its output within ${timeoutMs} ms`)), timeoutMs);
          waiters.push({
            text,
            resolve: () => {
              clearTimeout(timer);
              resolve();
            },
          });
        });
  const bannerLine = (label: string) => new RegExp(`^${label}: (.+)$`, 'm').exec(stdout)?.[1] ?? '';
  return new Promise((resolve, reject) => {
    void exited.then((code) => reject(new Error(`all-in-one exited with ${code} before its banner: ${stderr}${stdout}`)));
    // The banner's last line names the CLI's watch command.
    const ready = () =>
      resolve({
        child,
        url: /Switchyard is running at (\S+)/.exec(stdout)![1]!,
        apiKey: /Dev API key[^:]*: (sy_\S+)/.exec(stdout)![1]!,
        redis: bannerLine('Redis'),
        database: bannerLine('Database'),
        stdout: () => stdout,
        waitForOutput,
        kill(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    waitForOutput('npm run cli -- watch', 120_000).then(ready, reject);
  });
}

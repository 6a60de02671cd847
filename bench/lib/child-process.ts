import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { sleep, withTimeout } from './clock';
import { REPO_ROOT } from './repo-root';

export interface ChildOptions {
  /** Names its log file and its CPU profile, e.g. `ttft-all-in-one`. */
  name: string;
  /** A TypeScript entry point, relative to the repository root (`workers/api.ts`). */
  entry: string;
  /** The whole environment of the child: it inherits nothing but PATH and HOME. */
  env: Record<string, string>;
  logDir: string;
  /**
   * Set: run with `--cpu-prof`, writing into `<profileDir>/<name>/` on a clean exit. A folder per
   * process, not `--cpu-prof-name`: tsx's loader runs on a second thread, and every thread
   * writes a profile (the main thread's is the big one).
   */
  profileDir?: string;
  /** When the child is ready: a line of its stdout matches, or its /healthz answers 200. */
  ready: { stdout: RegExp } | { healthUrl: string };
  /** Default 30 s. */
  startTimeoutMs?: number;
}

export interface RunningChild {
  name: string;
  pid: number;
  /** The stdout match that signalled readiness (for `{stdout}` readiness). */
  match: RegExpExecArray | null;
  /** The last 64 KiB of stdout and stderr, for error messages. */
  output(): string;
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs` (default 15 s). */
  stop(graceMs?: number): Promise<void>;
}

const TAIL_BYTES = 64 * 1024;

/**
 * Starts a TypeScript entry point as `node --import tsx <entry>`: one process (the `tsx` CLI
 * would add a wrapper process), so its pid is the one whose RSS and CPU we read, signals reach
 * it directly, and `--cpu-prof` profiles the real thing.
 */
export async function startChild(options: ChildOptions): Promise<RunningChild> {
  const nodeArgs = ['--import', 'tsx'];
  if (options.profileDir) {
    const directory = path.join(options.profileDir, options.name);
    fs.mkdirSync(directory, { recursive: true });
    nodeArgs.push('--cpu-prof', '--cpu-prof-dir', directory);
  }
  fs.mkdirSync(options.logDir, { recursive: true });
  const logFile = fs.createWriteStream(path.join(options.logDir, `${options.name}.log`));
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, options.entry], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  let stdoutBuffer = '';
  let match: RegExpExecArray | null = null;
  let onStdoutLine: ((line: string) => void) | undefined;
  const keep = (chunk: Buffer) => {
    logFile.write(chunk);
    tail = (tail + chunk.toString()).slice(-TAIL_BYTES);
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    keep(chunk);
    if (!onStdoutLine) return;
    stdoutBuffer += chunk.toString();
    const lines = stdoutBuffer.split('\n');
    stdoutBuffer = lines.pop() ?? '';
    for (const line of lines) onStdoutLine(line);
  });
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      logFile.end();
      resolve(code);
    }),
  );
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  const stop = async (graceMs = 15_000): Promise<void> => {
    if (hasExited) return;
    child.kill('SIGTERM');
    // A clean exit matters: --cpu-prof writes its profile only then.
    const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(killer);
  };

  const ready = options.ready;
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const readiness =
    'stdout' in ready
      ? new Promise<void>((resolve) => {
          onStdoutLine = (line) => {
            const found = ready.stdout.exec(line);
            if (found && !match) {
              match = found;
              resolve();
            }
          };
        })
      : pollHealth(ready.healthUrl, () => hasExited);
  const failed = exited.then((code) => {
    const firstLine = tail.split('\n').find((line) => line.trim() && !line.startsWith('npm warn')) ?? '';
    throw new Error(`${options.name} exited with ${code} before it was ready: ${firstLine.trim()}\n${tail}`);
  });
  failed.catch(() => undefined);
  try {
    await withTimeout(Promise.race([readiness, failed]), startTimeoutMs, `${options.name} to be ready`);
  } catch (error) {
    await stop(2000);
    throw new Error(`${(error as Error).message}\n--- output of ${options.name} ---\n${tail.slice(-4000)}`);
  }

  return { name: options.name, pid: child.pid!, match, output: () => tail, exited, stop };
}

/** Polls `url` until it answers 200 (or the process is gone, which the caller reports). */
async function pollHealth(url: string, gone: () => boolean): Promise<void> {
  while (!gone()) {
    if (await answers200(url)) return;
    await sleep(100);
  }
  await new Promise(() => undefined);
}

function answers200(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get(url, { timeout: 1000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('error', () => resolve(false));
    request.on('timeout', () => request.destroy());
  });
}

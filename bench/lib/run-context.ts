import type { Spread } from './stats';

/** Settings from the command line that size the benchmarks. */
export interface BenchOptions {
  /** Repetitions of each benchmark (each figure's median, min and max are over these). */
  repetitions: number;
  /** Start the service processes under `--cpu-prof`. */
  profile: boolean;
  /** Turns of the soak. */
  soakTurns: number;
  /** Seconds each repetition of the turn-throughput benchmark keeps the load on. */
  turnSeconds: number;
  /** Turns in flight at once in the turn-throughput benchmark (a closed loop). */
  turnConcurrency: number;
}

/** What every baseline and case gets: where things are, how big to make them, and the baselines measured so far. */
export interface RunContext {
  runId: string;
  options: BenchOptions;
  /** The scripted model's base URL, including `/v1`. */
  scriptedModelUrl: string;
  scriptedModelPid: number;
  /** Redis keys of this run start with this (`bench-<runId>`); each case adds `-<case>`. */
  redisPrefix: string;
  /** PostgreSQL schemas of this run start with this (`bench_<runId>`). */
  schemaPrefix: string;
  /** Logs of the child processes. */
  logDir: string;
  /** Scratch space (DATA_DIR, TOOLS_DIR of the service). */
  tempDir: string;
  /** Set with --profile: where the service processes write their CPU profiles. */
  profileDir?: string;
  /** The variant's settings (--variant), given to every Switchyard process the benchmark starts. */
  stackEnv?: Record<string, string>;
  log(message: string): void;
  /** What is left of the full run's time budget (bench/run.ts; Infinity when benchmarks were named). */
  remainingMs(): number;
  /** A baseline figure measured earlier in this run (by its key), or undefined. */
  baseline(key: string): Spread | undefined;
  /**
   * Registers what must be stopped if the benchmark is abandoned (timed out) while it still
   * runs; returns the function that unregisters it once the benchmark stopped it itself.
   */
  registerCleanup(cleanup: () => Promise<void>): () => void;
}

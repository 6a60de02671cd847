import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bullmqFlow } from './baselines/bullmq-flow';
import { bullmqRoundTrip } from './baselines/bullmq-round-trip';
import { redisPubSub } from './baselines/redis-pubsub';
import { sdkConcurrentStreams } from './baselines/sdk-concurrent-streams';
import { sdkSingleStream } from './baselines/sdk-single-stream';
import { sdkTimeToFirstToken } from './baselines/sdk-time-to-first-token';
import { wsBroadcast } from './baselines/ws-broadcast';
import { concurrentStreams } from './cases/concurrent-streams';
import { singleStream } from './cases/single-stream';
import { soak } from './cases/soak';
import { timeToFirstToken } from './cases/time-to-first-token';
import { toolFanOut } from './cases/tool-fan-out';
import { turnThroughput } from './cases/turn-throughput';
import { websocketFanOut } from './cases/websocket-fan-out';
import { parseBenchArgs, USAGE } from './lib/args';
import { connectRedis, dropRedisKeys, dropSchemas } from './lib/backing-services';
import type { Benchmark } from './lib/benchmark';
import { now } from './lib/clock';
import { machineInfo } from './lib/machine-info';
import { formatNumber, renderResults } from './lib/markdown-report';
import { REPO_ROOT } from './lib/repo-root';
import type { BenchmarkReport } from './lib/results';
import { runBenchmark } from './lib/run-benchmark';
import type { RunContext } from './lib/run-context';
import { startScriptedModelProcess } from './lib/scripted-model-process';
import { spread } from './lib/stats';

/** Baselines first: a case's ratios need them. Cases in the issue's order. */
const BENCHMARKS: Benchmark[] = [
  sdkTimeToFirstToken,
  sdkSingleStream,
  sdkConcurrentStreams,
  bullmqRoundTrip,
  bullmqFlow,
  redisPubSub,
  wsBroadcast,
  timeToFirstToken,
  singleStream,
  concurrentStreams,
  turnThroughput,
  toolFanOut,
  websocketFanOut,
  soak,
];

const FINDINGS = path.join(REPO_ROOT, 'bench', 'FINDINGS.md');

/** The whole suite must end well inside 10 minutes; past this, the remaining benchmarks are skipped. */
const RUN_BUDGET_MS = 9.5 * 60_000;

async function main(argv: string[]): Promise<number> {
  const args = parseBenchArgs(argv);
  if (args.help) return print(USAGE, 0);
  if (args.list) return print(BENCHMARKS.map((benchmark) => `${benchmark.name.padEnd(20)} ${benchmark.title}`).join('\n'), 0);
  const selected = select(args.names);
  const fullRun = args.names.length === 0;
  const out = args.out ?? (fullRun ? path.join(REPO_ROOT, 'bench', 'RESULTS.md') : undefined);

  const startedAt = new Date();
  const runStart = now();
  const runId = randomBytes(3).toString('hex');
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), `switchyard-bench-${runId}-`));
  const logDir = path.join(tempDir, 'logs');
  const log = (message: string) => process.stderr.write(`[bench ${((now() - runStart) / 1000).toFixed(1).padStart(6)} s] ${message}\n`);
  const cleanups = new Set<() => Promise<void>>();
  const reports: BenchmarkReport[] = [];
  let failed = false;

  let scripted: Awaited<ReturnType<typeof startScriptedModelProcess>> | undefined;
  // Ctrl-C: stop the children and drop the run's keys and schemas before leaving.
  let interrupted = false;
  const cleanUpRun = async () => {
    for (const cleanup of [...cleanups]) await cleanup().catch(() => undefined);
    await scripted?.process.stop().catch(() => undefined);
    const redis = connectRedis();
    await dropRedisKeys(redis, `bench-${runId}`).catch(() => undefined);
    redis.disconnect();
    await dropSchemas(`bench_${runId}`).catch(() => undefined);
  };
  process.once('SIGINT', () => {
    interrupted = true;
    log('interrupted: cleaning up');
    void cleanUpRun().finally(() => process.exit(130));
  });

  log(`run ${runId}: ${selected.map((benchmark) => benchmark.name).join(', ')}; logs in ${logDir}`);
  const machine = await machineInfo();
  scripted = await startScriptedModelProcess(logDir);
  const context: RunContext = {
    runId,
    options: args.options,
    scriptedModelUrl: scripted.url,
    scriptedModelPid: scripted.process.pid,
    redisPrefix: `bench-${runId}`,
    schemaPrefix: `bench_${runId}`,
    logDir,
    tempDir,
    ...(args.options.profile ? { profileDir: path.join(REPO_ROOT, 'bench', 'profiles') } : {}),
    log,
    remainingMs: () => (fullRun ? RUN_BUDGET_MS - (now() - runStart) : Number.POSITIVE_INFINITY),
    baseline(key) {
      const figure = reports.flatMap((report) => report.figures).find((candidate) => candidate.key === key);
      return figure ? spread(figure.samples) : undefined;
    },
    registerCleanup(cleanup) {
      cleanups.add(cleanup);
      return () => cleanups.delete(cleanup);
    },
  };

  try {
    for (const benchmark of selected) {
      if (interrupted) break;
      if (fullRun && now() - runStart > RUN_BUDGET_MS) {
        log(`skipping ${benchmark.name}: the run is past its time budget`);
        reports.push({ name: benchmark.name, title: benchmark.title, kind: benchmark.kind, figures: [], notes: [], error: 'skipped: the run was past its 10-minute budget', durationMs: 0 });
        continue;
      }
      log(`${benchmark.name}: ${benchmark.title}`);
      const report = await runBenchmark(benchmark, context, cleanups);
      failed ||= report.error !== undefined;
      reports.push(report);
      for (const figure of report.figures) {
        const summary = spread(figure.samples);
        log(`  ${figure.label}: ${formatNumber(summary.median)} ${figure.unit} (${formatNumber(summary.min)} – ${formatNumber(summary.max)})`);
      }
      log(`${benchmark.name} done in ${((report.durationMs) / 1000).toFixed(1)} s`);
    }
  } finally {
    await cleanUpRun();
  }

  const markdown = renderResults({
    startedAt,
    durationMs: now() - runStart,
    command: `npm run bench${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}`,
    options: args.options,
    machine,
    loadAtEnd: os.loadavg().map((load) => load.toFixed(2)).join(' / '),
    reports,
    ...(fs.existsSync(FINDINGS) ? { findings: fs.readFileSync(FINDINGS, 'utf8') } : {}),
  });
  process.stdout.write(`${markdown}\n`);
  if (out) {
    fs.writeFileSync(out, `${markdown}\n`);
    log(`wrote ${path.relative(process.cwd(), out) || out}`);
  }
  if (failed) log(`some benchmarks failed; the child processes' logs are kept in ${logDir}`);
  else fs.rmSync(tempDir, { recursive: true, force: true });
  log(`total ${((now() - runStart) / 1000).toFixed(1)} s`);
  return failed ? 1 : 0;
}

/** The named benchmarks and the baselines they compare with, in suite order. */
function select(names: string[]): Benchmark[] {
  if (names.length === 0) return BENCHMARKS;
  const wanted = new Set<string>();
  for (const name of names) {
    const benchmark = BENCHMARKS.find((candidate) => candidate.name === name);
    if (!benchmark) throw new Error(`no benchmark named ${name}; try --list`);
    wanted.add(name);
    for (const baseline of benchmark.baselines ?? []) wanted.add(baseline);
  }
  return BENCHMARKS.filter((benchmark) => wanted.has(benchmark.name));
}

function print(text: string, code: number): number {
  process.stdout.write(`${text}\n`);
  return code;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bullmqFlow } from './baselines/bullmq-flow';
import { bullmqFlowCurve } from './baselines/bullmq-flow-curve';
import { bullmqRoundTrip } from './baselines/bullmq-round-trip';
import { peerSingleStream } from './baselines/peer-single-stream';
import { redisPubSub } from './baselines/redis-pubsub';
import { sdkConcurrentStreams } from './baselines/sdk-concurrent-streams';
import { sdkSingleStream } from './baselines/sdk-single-stream';
import { sdkTimeToFirstToken } from './baselines/sdk-time-to-first-token';
import { wsBroadcast } from './baselines/ws-broadcast';
import { approvalToTool } from './cases/approval-to-tool';
import { batchThroughput } from './cases/batch-throughput';
import { chatTimeToFirstToken } from './cases/chat-ttft';
import { concurrentStreams } from './cases/concurrent-streams';
import { historyTimeToFirstToken } from './cases/history-ttft';
import { compactedHistoryTimeToFirstToken } from './cases/compacted-history-ttft';
import { tokenEstimate } from './cases/token-estimate';
import { supersededHistoryTimeToFirstToken } from './cases/superseded-history-ttft';
import { idleWebsocketMemory } from './cases/idle-websocket-memory';
import { singleStream } from './cases/single-stream';
import { soak } from './cases/soak';
import { timeToFirstToken } from './cases/time-to-first-token';
import { budgetTimeToFirstToken } from './cases/budget-ttft';
import { toolFanOut } from './cases/tool-fan-out';
import { toolFanOutCurve } from './cases/tool-fan-out-curve';
import { turnCurve } from './cases/turn-curve';
import { ttftUnderLoad } from './cases/ttft-under-load';
import { turnThroughput } from './cases/turn-throughput';
import { webhookDelivery } from './cases/webhook-delivery';
import { openAiRoutes } from './cases/openai-routes';
import { heldMemory } from './cases/held-memory';
import { modelFallback } from './cases/model-fallback';
import { deadlines } from './cases/deadlines';
import { scheduleTicks } from './cases/schedule-ticks';
import { memoryProbes } from './cases/memory-probes';
import { turnCost } from './cases/turn-cost';
import { websocketFanOut } from './cases/websocket-fan-out';
import { parseBenchArgs, USAGE, type BenchVariant } from './lib/args';
import { connectRedis, dropRedisKeys, dropSchemas } from './lib/backing-services';
import type { Benchmark } from './lib/benchmark';
import { now } from './lib/clock';
import { curvePoints, renderCurveSvg } from './lib/curve-chart';
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
  peerSingleStream,
  sdkConcurrentStreams,
  bullmqRoundTrip,
  bullmqFlow,
  bullmqFlowCurve,
  redisPubSub,
  wsBroadcast,
  timeToFirstToken,
  budgetTimeToFirstToken,
  singleStream,
  concurrentStreams,
  turnThroughput,
  toolFanOut,
  websocketFanOut,
  soak,
  chatTimeToFirstToken,
  batchThroughput,
  turnCurve,
  historyTimeToFirstToken,
  supersededHistoryTimeToFirstToken,
  compactedHistoryTimeToFirstToken,
  tokenEstimate,
  idleWebsocketMemory,
  toolFanOutCurve,
  approvalToTool,
  webhookDelivery,
  ttftUnderLoad,
  openAiRoutes,
  heldMemory,
  modelFallback,
  deadlines,
  scheduleTicks,
  memoryProbes,
  turnCost,
];

const FINDINGS = path.join(REPO_ROOT, 'bench', 'FINDINGS.md');

/**
 * The whole suite (about 22 minutes on 2 cores, the curves, the first token under load and the
 * OpenAI routes included) must end within about 28; past this, the remaining benchmarks are
 * skipped rather than started.
 */
const RUN_BUDGET_MS = 26 * 60_000;

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
    if (args.variants.length > 0) {
      await runVariants(selected, args.variants, context, cleanups, reports, log, () => interrupted);
      selected.length = 0;
    }
    for (const benchmark of selected) {
      if (interrupted) break;
      if (fullRun && now() - runStart > RUN_BUDGET_MS) {
        log(`skipping ${benchmark.name}: the run is past its time budget`);
        reports.push({
          name: benchmark.name,
          title: benchmark.title,
          kind: benchmark.kind,
          figures: [],
          curves: [],
          notes: [],
          error: `skipped: the run was past its ${RUN_BUDGET_MS / 60_000}-minute budget`,
          durationMs: 0,
        });
        continue;
      }
      log(`${benchmark.name}: ${benchmark.title}`);
      const report = await runBenchmark(benchmark, context, cleanups);
      failed ||= report.error !== undefined;
      reports.push(report);
      logFigures(report, log);
      log(`${benchmark.name} done in ${(report.durationMs / 1000).toFixed(1)} s`);
    }
  } finally {
    await cleanUpRun();
  }

  const chartDir = out ? await writeCharts(reports, path.join(path.dirname(out), 'charts'), log) : undefined;
  const markdown = renderResults({
    startedAt,
    durationMs: now() - runStart,
    command: `npm run bench${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}`,
    options: args.options,
    machine,
    loadAtEnd: os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(' / '),
    reports,
    ...(fs.existsSync(FINDINGS) ? { findings: fs.readFileSync(FINDINGS, 'utf8') } : {}),
    ...(chartDir ? { chartDir } : {}),
  });
  process.stdout.write(`${markdown}\n`);
  if (out) {
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, `${markdown}\n`);
    log(`wrote ${path.relative(process.cwd(), out) || out}`);
  }
  if (failed) log(`some benchmarks failed; the child processes' logs are kept in ${logDir}`);
  else fs.rmSync(tempDir, { recursive: true, force: true });
  log(`total ${((now() - runStart) / 1000).toFixed(1)} s`);
  return failed ? 1 : 0;
}

/**
 * Writes each curve's chart as `<directory>/<id>.svg` (beside the markdown, which links them as
 * `charts/<id>.svg`). Returns undefined when there was nothing to draw or drawing failed, so
 * that the markdown links no missing file.
 */
async function writeCharts(reports: BenchmarkReport[], directory: string, log: (message: string) => void): Promise<string | undefined> {
  const figures = new Map(reports.flatMap((report) => report.figures.map((figure) => [figure.key, spread(figure.samples)] as const)));
  const curves = reports.flatMap((report) => report.curves);
  if (curves.length === 0) return undefined;
  try {
    fs.mkdirSync(directory, { recursive: true });
    let written = 0;
    for (const curve of curves) {
      const points = curvePoints(curve, figures);
      if (points.length === 0) continue;
      fs.writeFileSync(path.join(directory, `${curve.id}.svg`), await renderCurveSvg(curve, points));
      written++;
    }
    log(`wrote ${written} charts to ${path.relative(process.cwd(), directory) || directory}`);
    return path.basename(directory);
  } catch (error) {
    log(`could not draw the charts: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/** Each figure of a report as one line: its median and min – max over the repetitions. */
function logFigures(report: BenchmarkReport, log: (message: string) => void): void {
  for (const figure of report.figures) {
    const summary = spread(figure.samples);
    log(`  ${figure.label}: ${formatNumber(summary.median)} ${figure.unit} (${formatNumber(summary.min)} – ${formatNumber(summary.max)})`);
  }
}

/**
 * An A/B in one run: the baselines once, then each case in rounds, one repetition per variant
 * a round (the default settings and each `--variant`), the order rotating each round so that
 * every variant meets the same moments of the machine. A variant's figures are keyed
 * `<key>@<variant>` (and compared with its own figures where the case compares within itself).
 */
async function runVariants(
  selected: Benchmark[],
  variants: BenchVariant[],
  context: RunContext,
  cleanups: Set<() => Promise<void>>,
  reports: BenchmarkReport[],
  log: (message: string) => void,
  interrupted: () => boolean,
): Promise<void> {
  for (const baseline of selected.filter((benchmark) => benchmark.kind === 'baseline')) {
    log(`${baseline.name}: ${baseline.title}`);
    reports.push(await runBenchmark(baseline, context, cleanups));
  }
  const all: BenchVariant[] = [{ name: 'default', env: {} }, ...variants];
  const rounds = context.options.repetitions;
  for (const benchmark of selected.filter((candidate) => candidate.kind === 'case')) {
    const merged = new Map<string, BenchmarkReport>();
    for (let round = 0; round < rounds && !interrupted(); round++) {
      for (let offset = 0; offset < all.length; offset++) {
        const variant = all[(round + offset) % all.length]!;
        log(`${benchmark.name} [${variant.name}], round ${round + 1}/${rounds}`);
        const report = await runBenchmark(benchmark, { ...context, options: { ...context.options, repetitions: 1 }, stackEnv: variant.env }, cleanups);
        merged.set(variant.name, mergeRound(merged.get(variant.name), keyedFor(report, variant.name)));
        // Each round's figures, for pairing the variants round by round.
        for (const figure of report.figures) if (figure.samples.length > 0) log(`    ${figure.key}: ${formatNumber(figure.samples[0]!)} ${figure.unit}`);
      }
    }
    for (const variant of all) {
      const report = merged.get(variant.name);
      if (!report) continue;
      reports.push(report);
      logFigures(report, log);
    }
  }
}

function keyedFor(report: BenchmarkReport, variant: string): BenchmarkReport {
  if (variant === 'default') return report;
  const own = new Set(report.figures.map((figure) => figure.key));
  return {
    ...report,
    name: `${report.name} [${variant}]`,
    title: `${report.title} [${variant}]`,
    figures: report.figures.map((figure) => ({
      ...figure,
      key: `${figure.key}@${variant}`,
      label: `${figure.label} [${variant}]`,
      ...(figure.baselineKey && own.has(figure.baselineKey) ? { baselineKey: `${figure.baselineKey}@${variant}` } : {}),
    })),
    curves: [],
  };
}

/** One round's report added to the rounds before: each figure's samples appended, notes kept from every round. */
function mergeRound(before: BenchmarkReport | undefined, round: BenchmarkReport): BenchmarkReport {
  if (!before) return round;
  const figures = before.figures.map((figure) => ({ ...figure, samples: [...figure.samples, ...(round.figures.find((next) => next.key === figure.key)?.samples ?? [])] }));
  return {
    ...before,
    figures,
    notes: [...before.notes, ...round.notes],
    ...(round.error ? { error: round.error } : {}),
    durationMs: before.durationMs + round.durationMs,
  };
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

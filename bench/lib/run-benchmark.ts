import { ReportBuilder, type Benchmark } from './benchmark';
import { now, withTimeout } from './clock';
import type { BenchmarkReport } from './results';
import type { RunContext } from './run-context';

/**
 * Runs one benchmark within its time limit. A failure or a timeout is reported, never thrown:
 * the other benchmarks still run, and RESULTS.md says which one failed and why. On a timeout,
 * whatever the benchmark registered for cleanup (its service processes) is stopped here.
 */
export async function runBenchmark(benchmark: Benchmark, context: RunContext, cleanups: Set<() => Promise<void>>): Promise<BenchmarkReport> {
  const report = new ReportBuilder();
  const startedAt = now();
  let error: string | undefined;
  try {
    const timeoutMs = typeof benchmark.timeoutMs === 'function' ? benchmark.timeoutMs(context.options) : benchmark.timeoutMs;
    await withTimeout(benchmark.run(context, report), timeoutMs, `benchmark ${benchmark.name}`);
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
    context.log(`${benchmark.name} failed: ${error}`);
    for (const cleanup of [...cleanups]) await cleanup().catch(() => undefined);
    cleanups.clear();
  }
  return {
    name: benchmark.name,
    title: benchmark.title,
    kind: benchmark.kind,
    figures: report.figures,
    curves: report.curves,
    notes: report.notes,
    ...(error ? { error } : {}),
    durationMs: now() - startedAt,
  };
}

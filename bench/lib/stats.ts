/**
 * Order statistics for latency samples and for figures repeated over runs. Percentiles use
 * the nearest-rank method (the smallest sample with at least p% of samples at or below it):
 * it never invents a value between two samples, and with few samples p99 is simply the max,
 * which RESULTS.md states next to each figure's sample count.
 */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function min(samples: readonly number[]): number {
  return samples.length === 0 ? Number.NaN : samples.reduce((a, b) => Math.min(a, b));
}

export function max(samples: readonly number[]): number {
  return samples.length === 0 ? Number.NaN : samples.reduce((a, b) => Math.max(a, b));
}

export function mean(samples: readonly number[]): number {
  return samples.length === 0 ? Number.NaN : samples.reduce((a, b) => a + b, 0) / samples.length;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
  count: number;
}

/** How a figure varied over the repetitions of a run. */
export function spread(samples: readonly number[]): Spread {
  const finite = samples.filter((value) => Number.isFinite(value));
  return { median: median(finite), min: min(finite), max: max(finite), count: finite.length };
}

export interface LatencySummary {
  p50: number;
  p99: number;
  count: number;
}

export function latencySummary(samples: readonly number[]): LatencySummary {
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), count: samples.length };
}

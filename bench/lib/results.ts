/** A goal from the issue, checked against a figure's median (or its median's ratio to the baseline). */
export interface Target {
  /** `value`: the figure itself; `ratio`: figure ÷ baseline (both medians of this run). */
  on: 'value' | 'ratio';
  op: '<=' | '>=';
  value: number;
  /** Which numbered goal of the issue this is, e.g. `(1)`. */
  goal: string;
}

/** One number a benchmark reports, measured once per repetition. */
export interface Figure {
  /** Stable id; cases name their baseline by it (`sdk.ttft.p50`). */
  key: string;
  label: string;
  unit: string;
  /** One value per repetition. */
  samples: number[];
  /** The baseline figure this one is compared with (a ratio is shown when set). */
  baselineKey?: string;
  target?: Target;
}

/**
 * How a cost grows with the work: figures (by key) placed on an x axis, one line per series.
 * RESULTS.md shows it as a table and as a chart (bench/charts/<id>.svg).
 */
export interface Curve {
  /** Names the chart's file; stable across runs so RESULTS.md keeps linking to it. */
  id: string;
  title: string;
  x: CurveAxis;
  y: CurveAxis & { unit: string };
  series: CurveSeries[];
}

export interface CurveAxis {
  label: string;
  /** A logarithmic scale (for x values that grow by a factor, like 1, 4, 16, 64, 256). */
  log?: boolean;
}

export interface CurveSeries {
  name: string;
  /** Each point is the median (with min and max) of one figure of the run: the curve's benchmark's, or a baseline's. */
  points: { x: number; key: string }[];
}

export interface BenchmarkReport {
  name: string;
  title: string;
  kind: 'baseline' | 'case';
  figures: Figure[];
  curves: Curve[];
  /** Method, settings and observations, one line each, for RESULTS.md. */
  notes: string[];
  /** Set when the benchmark failed: its figures are whatever it had measured. */
  error?: string;
  durationMs: number;
}

export function targetText(target: Target, unit: string): string {
  const op = target.op === '<=' ? '≤' : '≥';
  return target.on === 'ratio' ? `${op} ${target.value}× baseline` : `${op} ${target.value} ${unit}`;
}

export function meetsTarget(target: Target, value: number, ratio: number | undefined): boolean | undefined {
  const measured = target.on === 'ratio' ? ratio : value;
  if (measured === undefined || !Number.isFinite(measured)) return undefined;
  return target.op === '<=' ? measured <= target.value : measured >= target.value;
}

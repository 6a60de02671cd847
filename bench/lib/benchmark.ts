import type { Curve, Figure, Target } from './results';
import type { BenchOptions, RunContext } from './run-context';

/** One baseline or case of the suite; `npm run bench -- <name>` runs it (with its baselines). */
export interface Benchmark {
  name: string;
  title: string;
  kind: 'baseline' | 'case';
  /** Baselines whose figures this case is compared with; they run first. */
  baselines?: string[];
  /** The whole benchmark (start-up included) is abandoned past this (may depend on the options). */
  timeoutMs: number | ((options: BenchOptions) => number);
  run(context: RunContext, report: ReportBuilder): Promise<void>;
}

export interface FigureDefinition {
  label: string;
  unit: string;
  baselineKey?: string;
  target?: Target;
}

/**
 * Collects a benchmark's figures and notes as it goes, so that a benchmark that fails half-way
 * still reports what it measured.
 */
export class ReportBuilder {
  readonly figures: Figure[] = [];
  readonly curves: Curve[] = [];
  readonly notes: string[] = [];

  define(key: string, definition: FigureDefinition): void {
    if (this.figures.some((figure) => figure.key === key)) return;
    this.figures.push({ key, samples: [], ...definition });
  }

  sample(key: string, value: number): void {
    const figure = this.figures.find((candidate) => candidate.key === key);
    if (!figure) throw new Error(`figure ${key} was not defined`);
    figure.samples.push(value);
  }

  /** A curve over figures defined (or to be defined) by this benchmark. */
  curve(curve: Curve): void {
    this.curves.push(curve);
  }

  note(line: string): void {
    this.notes.push(line);
  }
}

import { curvePoints } from './curve-chart';
import type { MachineInfo } from './machine-info';
import { meetsTarget, targetText, type BenchmarkReport, type Curve, type Figure } from './results';
import type { BenchOptions } from './run-context';
import { spread, type Spread } from './stats';

export interface RunSummary {
  startedAt: Date;
  durationMs: number;
  command: string;
  options: BenchOptions;
  machine: MachineInfo;
  /** The 1/5/15-minute load averages when the run ended. */
  loadAtEnd: string;
  /** Baselines first, then cases, in the order they ran. */
  reports: BenchmarkReport[];
  /** bench/FINDINGS.md, placed after the targets. */
  findings?: string;
  /** Where the curves' charts were written, relative to the markdown file (`charts/<id>.svg`); unset: no charts. */
  chartDir?: string;
}

/** RESULTS.md: the machine, the targets at a glance, then every benchmark's figures and notes. */
export function renderResults(run: RunSummary): string {
  const figures = new Map<string, Spread>();
  for (const report of run.reports) for (const figure of report.figures) figures.set(figure.key, spread(figure.samples));
  const compare = (figure: Figure) => compareWithBaseline(figure, figures);

  const lines: string[] = [];
  lines.push('# Switchyard benchmark results', '');
  lines.push(
    `Written by \`${run.command}\` (bench/run.ts) on ${run.startedAt.toISOString()}; the whole run took ${minutes(run.durationMs)}.`,
    `Each benchmark ran ${run.options.repetitions} times: every figure shows the median of its repetitions, and their min and max ` +
      "(n = repetitions that produced a value). A target is checked against the median; a ratio is the figure's median ÷ its " +
      "baseline's median, both measured in this run against the same scripted model, Redis and PostgreSQL.",
    '',
  );

  lines.push('## Machine', '', '| | |', '|---|---|');
  const machine = run.machine;
  lines.push(`| CPU | ${machine.cores} cores (${machine.cpuModel}) |`);
  lines.push(`| Memory | ${machine.memoryGiB} GiB |`);
  lines.push(`| Node | ${machine.node} |`, `| Redis | ${machine.redis} |`, `| PostgreSQL | ${machine.postgres} |`);
  lines.push(`| OS | ${machine.os} |`, `| Load average at start (1/5/15 min) | ${machine.loadAverage} |`, `| Load average at the end | ${run.loadAtEnd} |`, '');
  const busyAtStart = Number(machine.loadAverage.split(' / ')[0]) > 0.5;
  if (busyAtStart) {
    lines.push(
      '> The machine was not idle when the run started (1-minute load above 0.5): other work shared the two cores, and the ' +
        'figures are lower and noisier than on an idle machine. Ratios to baselines measured in the same run suffer less than absolute figures.',
      '',
    );
  }

  lines.push('## Targets', '');
  lines.push('| goal | benchmark | figure | median | min – max | baseline (median) | ratio | target | met? |');
  lines.push('|---|---|---|---|---|---|---|---|---|');
  for (const report of run.reports.filter((candidate) => candidate.kind === 'case')) {
    for (const figure of report.figures.filter((candidate) => candidate.target)) {
      const own = figures.get(figure.key)!;
      const { baseline, ratio } = compare(figure);
      const met = meetsTarget(figure.target!, own.median, ratio);
      lines.push(
        `| ${figure.target!.goal} | ${report.title} | ${figure.label} | ${value(own.median, figure.unit)} | ${range(own)} | ` +
          `${baseline ? value(baseline.median, figure.unit) : '–'} | ${ratioText(ratio)} | ${targetText(figure.target!, figure.unit)} | ${verdict(met, report)} |`,
      );
    }
  }
  lines.push('');
  // Kept by hand in bench/FINDINGS.md (what profiling found, before/after figures): a run rewrites the rest.
  if (run.findings) lines.push(run.findings.trim(), '');

  for (const [heading, kind] of [
    ['Benchmarks', 'case'],
    ['Baselines', 'baseline'],
  ] as const) {
    lines.push(`## ${heading}`, '');
    for (const report of run.reports.filter((candidate) => candidate.kind === kind)) {
      lines.push(`### ${report.title}`, '', `\`npm run bench -- ${report.name}\` · ${minutes(report.durationMs)}`, '');
      if (report.error) lines.push(`**Failed:** ${report.error.split('\n')[0]}`, '');
      for (const note of report.notes) lines.push(`- ${note}`);
      if (report.notes.length > 0) lines.push('');
      lines.push('| figure | median | min | max | n | baseline (median) | ratio | target | met? |', '|---|---|---|---|---|---|---|---|---|');
      for (const figure of report.figures) {
        const own = figures.get(figure.key)!;
        const { baseline, ratio } = compare(figure);
        const target = figure.target;
        lines.push(
          `| ${figure.label} | ${value(own.median, figure.unit)} | ${value(own.min, figure.unit)} | ${value(own.max, figure.unit)} | ${own.count} | ` +
            `${baseline ? `${value(baseline.median, figure.unit)} (${figure.baselineKey})` : '–'} | ${ratioText(ratio)} | ` +
            `${target ? targetText(target, figure.unit) : '–'} | ${target ? verdict(meetsTarget(target, own.median, ratio), report) : '–'} |`,
        );
      }
      lines.push('');
      for (const curve of report.curves) lines.push(...curveSection(curve, figures, run.chartDir));
    }
  }

  lines.push('## How the figures are taken', '');
  lines.push(
    '- Every timestamp is taken in the bench process (`performance.now()`), which also runs every client: the HTTP client that POSTs turns, ' +
      'the websocket clients and the direct SDK client. Service processes, the scripted model and the raw ws server run as child processes; ' +
      "Redis and PostgreSQL are the machine's own. All share the same cores, which the CPU lines of each benchmark account for.",
    "- Percentiles are nearest-rank over one repetition's samples; with n samples, p99 is the ⌈0.99·n⌉-th smallest.",
    '- Tokens: Switchyard merges consecutive text deltas when its event log is busy, so events are not tokens. Token rates are the ' +
      "scenario's token count (the scripted model sends exactly that many) ÷ the time from sending the request (POST of the turn; the " +
      "SDK request; the broadcast request) to the last text received, the same definition on both sides of every ratio. The issue's " +
      'alternative, first → last text delta, is reported beside it but not used for targets: with merged deltas the first delta can arrive ' +
      'just before the last. Characters/s are reported too, and each case checks that every client assembled the whole text.',
    '- The peer (the "Peer (AI SDK streamText + resumable-stream)" baselines) runs in a process of its own, as the service does; its client ' +
      "in the bench process POSTs `{id, message}` as the AI SDK's chat transport does and stamps each read of the SSE response before " +
      'parsing it, as the websocket clients stamp their frames. The "(1) peer" and "(2) peer" targets ask Switchyard to be ahead of it.',
    "- A curve is a set of figures (each in its benchmark's table, with fewer repetitions than the targets' figures); its chart, drawn " +
      "with Vega-Lite from the same medians, marks each point's min – max with a vertical rule.",
    "- The scripted model answers from a scenario carried in the turn's message (`[[scripted {...}]]`) for Switchyard and in the " +
      '`x-scripted-scenario` header for the SDK, so both get the same answer from the same server.',
    '',
  );
  return lines.join('\n');
}

/** A curve: its chart (when one was written) and its medians, one row per x value, one column per series. */
function curveSection(curve: Curve, figures: Map<string, Spread>, chartDir: string | undefined): string[] {
  const points = curvePoints(curve, figures);
  const lines = [`#### ${curve.title}`, ''];
  if (points.length === 0) return [...lines, 'Not measured.', ''];
  if (chartDir) lines.push(`![${curve.title}](${chartDir}/${curve.id}.svg)`, '');
  const xs = [...new Set(curve.series.flatMap((series) => series.points.map((point) => point.x)))].sort((a, b) => a - b);
  lines.push(`| ${curve.x.label} | ${curve.series.map((series) => series.name).join(' | ')} |`, `|---|${curve.series.map(() => '---').join('|')}|`);
  for (const x of xs) {
    const cells = curve.series.map((series) => {
      const point = points.find((candidate) => candidate.series === series.name && candidate.x === x);
      return point ? `${value(point.median, curve.y.unit)} (${range(point)})` : '–';
    });
    lines.push(`| ${x.toLocaleString('en-US')} | ${cells.join(' | ')} |`);
  }
  lines.push('', 'Median (min – max) over the repetitions of each point.', '');
  return lines;
}

function compareWithBaseline(figure: Figure, figures: Map<string, Spread>): { baseline?: Spread; ratio?: number } {
  if (!figure.baselineKey) return {};
  const baseline = figures.get(figure.baselineKey);
  if (!baseline || !Number.isFinite(baseline.median)) return {};
  const own = figures.get(figure.key)!;
  return { baseline, ratio: own.median / baseline.median };
}

function verdict(met: boolean | undefined, report: BenchmarkReport): string {
  if (met === undefined) return report.error ? '**not measured** (failed)' : 'not measured';
  return met ? '✅ met' : '❌ missed';
}

export function formatNumber(number: number): string {
  if (!Number.isFinite(number)) return '–';
  const magnitude = Math.abs(number);
  if (magnitude >= 1000) return Math.round(number).toLocaleString('en-US');
  if (magnitude >= 100) return number.toFixed(0);
  if (magnitude >= 10) return number.toFixed(1);
  return number.toFixed(2);
}

const value = (number: number, unit: string) => (Number.isFinite(number) ? `${formatNumber(number)} ${unit}` : '–');
const range = (own: { min: number; max: number }) => `${formatNumber(own.min)} – ${formatNumber(own.max)}`;
const ratioText = (ratio: number | undefined) => (ratio === undefined || !Number.isFinite(ratio) ? '–' : `${ratio.toFixed(2)}×`);

function minutes(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds >= 60 ? `${Math.floor(seconds / 60)} min ${seconds % 60} s` : `${seconds} s`;
}

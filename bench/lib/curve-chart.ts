import type { TopLevelSpec } from 'vega-lite';
import type { Curve } from './results';
import type { Spread } from './stats';

/** One point of a curve as the chart draws it. */
export interface CurvePoint {
  x: number;
  series: string;
  median: number;
  min: number;
  max: number;
}

/** The points of a curve that were measured (a failed or skipped benchmark leaves some out). */
export function curvePoints(curve: Curve, figures: ReadonlyMap<string, Spread>): CurvePoint[] {
  return curve.series.flatMap((series) =>
    series.points.flatMap((point) => {
      const figure = figures.get(point.key);
      if (!figure || !Number.isFinite(figure.median)) return [];
      return [{ x: point.x, series: series.name, median: figure.median, min: figure.min, max: figure.max }];
    }),
  );
}

/**
 * The Vega-Lite spec of a curve: each series' medians as a line with points, and the spread
 * over the repetitions (min to max) as a vertical rule through each point.
 */
export function curveSpec(curve: Curve, points: CurvePoint[]): TopLevelSpec {
  const yScale = curve.y.log ? { type: 'log' as const } : { zero: true };
  const yTitle = `${curve.y.label} (${curve.y.unit})`;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: curve.title,
    width: 520,
    height: 300,
    background: 'white',
    data: { values: points },
    encoding: {
      x: {
        field: 'x',
        type: 'quantitative',
        title: curve.x.label,
        // No rounding of the domain out to the next power of ten; a little room around the end points.
        scale: curve.x.log ? { type: 'log', nice: false, padding: 16 } : { zero: false, nice: false, padding: 16 },
        // Ticks at the measured values only: 1, 4, 16… rather than the scale's round numbers.
        axis: { values: [...new Set(points.map((point) => point.x))], format: ',' },
      },
      color: { field: 'series', type: 'nominal', title: null, sort: curve.series.map((series) => series.name), legend: { orient: 'bottom', labelLimit: 0 } },
    },
    layer: [
      { mark: { type: 'rule', strokeWidth: 2, opacity: 0.7 }, encoding: { y: { field: 'min', type: 'quantitative', title: yTitle, scale: yScale }, y2: { field: 'max' } } },
      { mark: { type: 'line', point: true }, encoding: { y: { field: 'median', type: 'quantitative', title: yTitle, scale: yScale } } },
    ],
  };
}

/** Renders a curve as SVG with Vega-Lite → Vega, headless (no canvas: text is measured by estimate). */
export async function renderCurveSvg(curve: Curve, points: CurvePoint[]): Promise<string> {
  // Both are ES modules whose graph has a top-level await (vega-canvas): import(), not require().
  const [vega, vegaLite] = await Promise.all([import('vega'), import('vega-lite')]);
  const view = new vega.View(vega.parse(vegaLite.compile(curveSpec(curve, points)).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

import fs from 'node:fs';
import path from 'node:path';

/** One query of a Grafana panel, with the dashboard's variables replaced by fixed values. */
export interface DashboardTarget {
  dashboard: string;
  panel: string;
  refId: string;
  /** As written in the dashboard. */
  rawExpr: string;
  /** Ready for Prometheus's HTTP API. */
  expr: string;
}

interface Panel {
  title?: string;
  type?: string;
  targets?: { refId?: string; expr?: string; hide?: boolean }[];
  /** A collapsed row keeps its panels here. */
  panels?: Panel[];
}

interface TemplateVariable {
  name: string;
  current?: { value?: string | string[] };
  options?: { value?: string }[];
  includeAll?: boolean;
}

/**
 * Grafana's built-in interval variables, fixed. `$__rate_interval` must hold several scrapes (four
 * scrape intervals at least, as in production), and more: the figures come from one short load,
 * and the panels are checked after waits of up to a minute each, so a window that could slide
 * past the load would leave rates of zero, and a quantile of those is NaN. An hour cannot.
 */
const BUILT_INS: Record<string, string> = {
  __rate_interval: '1h',
  __interval: '15s',
  __interval_ms: '15000',
  __range: '5m',
  __range_s: '300',
  __range_ms: '300000',
};

/** Every visible Prometheus query of every panel of every dashboard file in `dir`. */
export function dashboardTargets(dir: string): DashboardTarget[] {
  const found: DashboardTarget[] = [];
  for (const file of fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()) {
    const dashboard = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as {
      title?: string;
      panels?: Panel[];
      templating?: { list?: TemplateVariable[] };
    };
    const values = { ...BUILT_INS, ...variableValues(dashboard.templating?.list ?? []) };
    const visit = (panels: Panel[]) => {
      for (const panel of panels) {
        for (const target of panel.targets ?? []) {
          if (target.hide || !target.expr) continue;
          found.push({
            dashboard: `${file} (${dashboard.title ?? 'untitled'})`,
            panel: panel.title ?? `untitled ${panel.type ?? 'panel'}`,
            refId: target.refId ?? '?',
            rawExpr: target.expr,
            expr: substitute(target.expr, values),
          });
        }
        visit(panel.panels ?? []);
      }
    };
    visit(dashboard.panels ?? []);
  }
  return found;
}

/** A dashboard variable's value as the dashboard saved it ("All" as a regex that matches anything). */
function variableValues(variables: TemplateVariable[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (const variable of variables) {
    const current = variable.current?.value;
    const value = Array.isArray(current) ? current[0] : (current ?? variable.options?.[0]?.value);
    values[variable.name] = value === undefined || value === '$__all' ? '.*' : value;
  }
  return values;
}

/** `$name`, `${name}`, `${name:format}` and `[[name]]`; an unknown name is left for the caller to notice. */
function substitute(expr: string, values: Record<string, string>): string {
  return expr.replace(/\$\{(\w+)(?::[^}]*)?\}|\[\[(\w+)\]\]|\$(\w+)/g, (whole, braced, bracketed, bare) => values[braced ?? bracketed ?? bare] ?? whole);
}

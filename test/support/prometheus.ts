import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { closedPort } from './ports';
import { findExecutable, missingProgram } from './required-programs';

/**
 * A real Prometheus for tests: Debian's `prometheus` binary with a configuration, a data
 * folder and a loopback port of its own (never the packaged service's).
 */
export interface PrometheusServer {
  url: string;
  /** An instant query through the HTTP API; throws when Prometheus refuses the expression. */
  query(expr: string): Promise<PrometheusSample[]>;
  /** The scrape targets Prometheus is working on, with their health. */
  activeTargets(): Promise<{ job: string; scrapeUrl: string; health: string; lastError: string }[]>;
  /** What it logged (on stderr), for failure messages. */
  output(): string;
  close(): Promise<void>;
}

export interface PrometheusSample {
  metric: Record<string, string>;
  /** [time, value as text] ("NaN" for a quantile of no observations). */
  value: [number, string];
}

/** Why a test cannot run Prometheus here, saying how to install it; undefined when it can. */
export const prometheusMissing = () => missingProgram('prometheus', 'apt-get install -y --no-install-recommends prometheus (bash .ci/run installs it when missing)');

/** The `prometheus` executable on PATH (Debian puts it in /usr/bin); throws saying how to install it. */
export function findPrometheus(): string {
  const binary = findExecutable('prometheus');
  if (!binary) throw new Error(prometheusMissing());
  return binary;
}

/**
 * A deployment's scrape configuration made to scrape test processes: every job keeps its name,
 * metrics path and relabelling; only where its targets come from (static lists, DNS and other
 * service discovery) is replaced by `targets[job]`, and scrapes are every `scrapeInterval`.
 * A job without an entry in `targets` is an error: the test must say what it scrapes.
 */
export function configForTargets(configText: string, targets: Record<string, string[]>, scrapeInterval = '1s'): Record<string, unknown> {
  const config = parse(configText) as { global?: Record<string, unknown>; scrape_configs?: Record<string, unknown>[] };
  const jobs = config.scrape_configs ?? [];
  const unknown = jobs.map((job) => String(job.job_name)).filter((name) => !(name in targets));
  if (unknown.length > 0) throw new Error(`no test targets for the scrape jobs ${unknown.join(', ')}`);
  return {
    ...config,
    global: { ...config.global, scrape_interval: scrapeInterval, scrape_timeout: scrapeInterval },
    scrape_configs: jobs.map((job) => {
      const kept = Object.fromEntries(Object.entries(job).filter(([key]) => key !== 'static_configs' && !key.endsWith('_sd_configs')));
      return {
        ...kept,
        ...(job.scrape_interval !== undefined ? { scrape_interval: scrapeInterval } : {}),
        ...(job.scrape_timeout !== undefined ? { scrape_timeout: scrapeInterval } : {}),
        static_configs: [{ targets: targets[String(job.job_name)] }],
      };
    }),
  };
}

/** Starts Prometheus with `config` (as JSON, which YAML reads) and waits until it is ready. */
export async function startPrometheus(config: Record<string, unknown>): Promise<PrometheusServer> {
  const binary = findPrometheus();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-prometheus-'));
  const configFile = path.join(dir, 'prometheus.yml');
  await writeFile(configFile, JSON.stringify(config, null, 2));
  const port = await closedPort();
  const child = spawn(binary, [`--config.file=${configFile}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) {
      await close();
      throw new Error(`prometheus exited with ${child.exitCode} before it was ready:\n${output}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await close();
      throw new Error(`prometheus was not ready within 30 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  const api = async <T>(route: string): Promise<T> => {
    const response = await fetch(`${url}${route}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${route}: ${body.error ?? response.status}`);
    return body.data;
  };
  return {
    url,
    async query(expr) {
      const data = await api<{ resultType: string; result: PrometheusSample[] }>(`/api/v1/query?query=${encodeURIComponent(expr)}`);
      return data.result;
    },
    async activeTargets() {
      const data = await api<{ activeTargets: { labels: Record<string, string>; scrapeUrl: string; health: string; lastError: string }[] }>('/api/v1/targets');
      return data.activeTargets.map((target) => ({ job: target.labels.job!, scrapeUrl: target.scrapeUrl, health: target.health, lastError: target.lastError }));
    },
    output: () => output,
    close,
  };
}

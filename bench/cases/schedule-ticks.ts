import type { Benchmark } from '../lib/benchmark';
import { withPostgres } from '../lib/backing-services';
import { sleep } from '../lib/clock';
import { cpuSeconds } from '../lib/process-usage';
import { scriptedContent } from '../lib/scenario';
import { median, percentile } from '../lib/stats';
import { startSwitchyard } from '../lib/switchyard-stack';

const SCHEDULES = 1000;
const EVERY_S = 10;
const MEASURE_S = 40;
const IDLE_S = 30;

/**
 * 1,000 schedules every 10 s on one worker process, their first ticks spread over one interval
 * (100 ticks a second): the delay from each tick's time to its turn's turn-start (turns.started_at),
 * and the worker's CPU over 30 s while nothing is due (the same 1,000 schedules, next tick an hour
 * away), against the same worker idle with no schedule at all before they were made.
 */
export const scheduleTicks: Benchmark = {
  name: 'schedule-ticks',
  title: 'Schedules: 1,000 every 10 s on one worker, tick → turn-start, and idle CPU',
  kind: 'case',
  timeoutMs: 600_000,
  async run(context, report) {
    report.note(
      `${SCHEDULES} schedules \`every: "${EVERY_S}s"\`, new conversation per run, first ticks spread over ${EVERY_S} s; one API and one worker process; ` +
        `ticks measured over ${MEASURE_S} s; idle CPU over ${IDLE_S} s of the worker process (utime+stime).`,
    );
    report.define('scheduleTicks.turnStart.p50Ms', { label: 'tick time → its turn-start, p50', unit: 'ms' });
    report.define('scheduleTicks.turnStart.p99Ms', { label: 'tick time → its turn-start, p99', unit: 'ms' });
    report.define('scheduleTicks.admitted.p50Ms', { label: 'of which tick time → its run admitted (schedule_runs.started_at), p50', unit: 'ms' });
    report.define('scheduleTicks.admitted.p99Ms', { label: 'of which tick time → its run admitted, p99', unit: 'ms' });
    report.define('scheduleTicks.queued.p50Ms', { label: 'of which run admitted → its turn-start (the turn queue), p50', unit: 'ms' });
    report.define('scheduleTicks.queued.p99Ms', { label: 'of which run admitted → its turn-start, p99', unit: 'ms' });
    report.define('scheduleTicks.runs', { label: `runs started in ${MEASURE_S} s (expected ${(SCHEDULES * MEASURE_S) / EVERY_S})`, unit: 'runs' });
    report.define('scheduleTicks.idleBare.cpuPct', { label: `worker CPU, no schedules, ${IDLE_S} s`, unit: '%' });
    report.define('scheduleTicks.idle.cpuPct', { label: `worker CPU, ${SCHEDULES} schedules none due, ${IDLE_S} s`, unit: '%', baselineKey: 'scheduleTicks.idleBare.cpuPct' });

    const stack = await startSwitchyard(context, {
      name: 'schedule-ticks',
      topology: 'api-and-workers',
      workers: 1,
      env: { MAX_ACTIVE_TURNS_PER_USER: '100000', WORKER_CONCURRENCY: '50' },
    });
    try {
      const worker = stack.services.find((service) => service.role === 'worker')!.process;
      const idleCpu = async () => {
        const before = cpuSeconds(worker.pid);
        await sleep(IDLE_S * 1000);
        return ((cpuSeconds(worker.pid) - before) / IDLE_S) * 100;
      };
      report.sample('scheduleTicks.idleBare.cpuPct', await idleCpu());

      const headers = { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' };
      const content = scriptedContent({ text: 'tick' });
      const base = Date.now() + 20_000;
      for (let start = 0; start < SCHEDULES; start += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, SCHEDULES - start) }, async (_, k) => {
            const index = start + k;
            const startAt = new Date(base + Math.floor((index * EVERY_S * 1000) / SCHEDULES)).toISOString();
            const response = await fetch(`${stack.url}/v1/schedules`, { method: 'POST', headers, body: JSON.stringify({ content, every: `${EVERY_S}s`, startAt }) });
            if (response.status !== 201) throw new Error(`schedule not made: ${response.status} ${await response.text()}`);
          }),
        );
      }
      if (Date.now() > base) throw new Error('making the schedules took past their first tick');
      await sleep(base - Date.now() + MEASURE_S * 1000);

      // Ticks of the measured window only; the turns then have a few seconds to start.
      await sleep(5000);
      // Each stage's share: the ticker's (tick → its run row, written with the turn) and the turn
      // queue's (run row → the worker starting the turn).
      const stages = await withPostgres(async (client) => {
        await client.query(`SET search_path TO ${stack.schema}`);
        const { rows } = await client.query(
          `SELECT extract(epoch FROM (t.started_at - r.scheduled_for)) * 1000 AS total, extract(epoch FROM (r.started_at - r.scheduled_for)) * 1000 AS admitted,
                  extract(epoch FROM (t.started_at - r.started_at)) * 1000 AS queued
           FROM schedule_runs r JOIN turns t ON t.id = r.turn_id
           WHERE r.scheduled_for < to_timestamp($1 / 1000.0) AND t.started_at IS NOT NULL`,
          [base + MEASURE_S * 1000],
        );
        await client.query(`UPDATE schedules SET next_run_at = now() + interval '1 hour'`);
        const column = (name: string) => rows.map((row) => Number(row[name]));
        return { total: column('total'), admitted: column('admitted'), queued: column('queued') };
      });

      report.sample('scheduleTicks.runs', stages.total.length);
      report.sample('scheduleTicks.turnStart.p50Ms', median(stages.total));
      report.sample('scheduleTicks.turnStart.p99Ms', percentile(stages.total, 99));
      report.sample('scheduleTicks.admitted.p50Ms', median(stages.admitted));
      report.sample('scheduleTicks.admitted.p99Ms', percentile(stages.admitted, 99));
      report.sample('scheduleTicks.queued.p50Ms', median(stages.queued));
      report.sample('scheduleTicks.queued.p99Ms', percentile(stages.queued, 99));
      await sleep(5000);
      report.sample('scheduleTicks.idle.cpuPct', await idleCpu());
    } finally {
      await stack.stop();
    }
  },
};

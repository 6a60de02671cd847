import type { Benchmark } from '../lib/benchmark';
import { withPostgres } from '../lib/backing-services';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { withSingleLane } from '../lib/single-lane';
import { firstTokenMs, type TurnTiming } from '../lib/turn-tracker';
import { WORKLOADS } from '../lib/workloads';

const { tokens, turnsPerRepetition, turnsPerConversation, warmup } = WORKLOADS.ttft;

/**
 * What a budget costs a turn's first token: the time-to-first-token case's turns, one at a time,
 * with a budget on the user and on the key (limits far from reached) and without, the two
 * alternating turn by turn in one run so that both meet the same moments of a noisy machine.
 * With budgets, admission reads the budgets joined to the ledger's sums (one query), and so does
 * the worker before the turn's first step; without, the same two queries find no budget. The
 * budgets are written straight into the stack's schema between turns, outside the timed span.
 */
export const budgetTimeToFirstToken: Benchmark = {
  name: 'ttft-budget',
  title: 'Time to first token with a budget on the user and the key, against without (interleaved)',
  kind: 'case',
  timeoutMs: 240_000,
  async run(context, report) {
    report.define('ttftBudget.withBudget.p50', { label: 'POST turn → first text-delta, user and key budgets set, p50', unit: 'ms', baselineKey: 'ttftBudget.without.p50' });
    report.define('ttftBudget.withBudget.p99', { label: 'POST turn → first text-delta, user and key budgets set, p99', unit: 'ms', baselineKey: 'ttftBudget.without.p99' });
    report.define('ttftBudget.without.p50', { label: 'POST turn → first text-delta, no budget, p50 (interleaved)', unit: 'ms' });
    report.define('ttftBudget.without.p99', { label: 'POST turn → first text-delta, no budget, p99 (interleaved)', unit: 'ms' });
    report.define('ttftBudget.cost.p50', { label: "the budgets' cost to the first token, p50 (with − without)", unit: 'ms' });
    report.define('ttftBudget.cost.p99', { label: "the budgets' cost to the first token, p99 (with − without)", unit: 'ms' });
    report.define('ttftBudget.admission.withBudget.p50', { label: 'POST turn → 202 (admission), budgets set, p50', unit: 'ms', baselineKey: 'ttftBudget.admission.without.p50' });
    report.define('ttftBudget.admission.withBudget.p99', { label: 'POST turn → 202 (admission), budgets set, p99', unit: 'ms', baselineKey: 'ttftBudget.admission.without.p99' });
    report.define('ttftBudget.admission.without.p50', { label: 'POST turn → 202 (admission), no budget, p50', unit: 'ms' });
    report.define('ttftBudget.admission.without.p99', { label: 'POST turn → 202 (admission), no budget, p99', unit: 'ms' });
    report.define('ttftBudget.admission.cost.p50', { label: "the budgets' cost to admission, p50 (with − without)", unit: 'ms' });
    report.define('ttftBudget.admission.cost.p99', { label: "the budgets' cost to admission, p99 (with − without)", unit: 'ms' });

    await withSingleLane(context, { name: 'ttft-budget', topology: 'all-in-one', turnsPerConversation }, async ({ stack, api, tracker, lane }) => {
      const schema = stack.schema;
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`not a schema name: ${schema}`);
      const setBudgets = (on: boolean) =>
        withPostgres(async (client) => {
          await client.query(`DELETE FROM ${schema}.budgets`);
          if (!on) return;
          // The all-in-one's dev user and its key: a day budget on the user, a month one on the key, in USD and tokens.
          await client.query(
            `INSERT INTO ${schema}.budgets (scope, subject_id, period, limit_usd, limit_tokens, on_exceeded)
             SELECT 'user', user_id, 'day', 1000000, 1000000000000, 'reject' FROM (SELECT user_id FROM ${schema}.api_keys ORDER BY created_at LIMIT 1) k
             UNION ALL
             SELECT 'key', id, 'month', 1000000, 1000000000000, 'reject' FROM (SELECT id FROM ${schema}.api_keys ORDER BY created_at LIMIT 1) k`,
          );
        });
      const content = scriptedContent(fillerTokens(tokens));
      const oneTurn = async (budgeted: boolean) => {
        await setBudgets(budgeted);
        return tracker.runTurn(api, await lane.next(), content);
      };
      for (let index = 0; index < warmup; index++) await oneTurn(index % 2 === 0);
      for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
        const timed: Record<'with' | 'without', TurnTiming[]> = { with: [], without: [] };
        for (let index = 0; index < turnsPerRepetition; index++) {
          // Pairs in alternating order: with-without, then without-with.
          const budgeted = (index % 2 === 0) === (Math.floor(index / 2) % 2 === 0);
          timed[budgeted ? 'with' : 'without'].push(await oneTurn(budgeted));
        }
        const first = (timings: TurnTiming[]) => latencySummary(timings.map((timing) => firstTokenMs(timing)));
        const admission = (timings: TurnTiming[]) => latencySummary(timings.map((timing) => timing.acceptedAt! - timing.postedAt));
        const [withFirst, withoutFirst] = [first(timed.with), first(timed.without)];
        const [withAdmission, withoutAdmission] = [admission(timed.with), admission(timed.without)];
        report.sample('ttftBudget.withBudget.p50', withFirst.p50);
        report.sample('ttftBudget.withBudget.p99', withFirst.p99);
        report.sample('ttftBudget.without.p50', withoutFirst.p50);
        report.sample('ttftBudget.without.p99', withoutFirst.p99);
        report.sample('ttftBudget.cost.p50', withFirst.p50 - withoutFirst.p50);
        report.sample('ttftBudget.cost.p99', withFirst.p99 - withoutFirst.p99);
        report.sample('ttftBudget.admission.withBudget.p50', withAdmission.p50);
        report.sample('ttftBudget.admission.withBudget.p99', withAdmission.p99);
        report.sample('ttftBudget.admission.without.p50', withoutAdmission.p50);
        report.sample('ttftBudget.admission.without.p99', withoutAdmission.p99);
        report.sample('ttftBudget.admission.cost.p50', withAdmission.p50 - withoutAdmission.p50);
        report.sample('ttftBudget.admission.cost.p99', withAdmission.p99 - withoutAdmission.p99);
      }
      const lines = await withPostgres(async (client) => (await client.query(`SELECT count(*)::int AS n FROM ${schema}.provider_calls`)).rows[0].n as number);
      report.note(
        `all-in-one, default settings; ${turnsPerRepetition} sequential turns of ${tokens} tokens per repetition, half with a day budget on the user and a month budget on its key ` +
          `(USD and token limits, never reached), half with none, alternating in pairs; the ledger held ${lines} lines of the user's at the end, each budget summing them all.`,
      );
    });
  },
};

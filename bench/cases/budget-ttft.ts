import type { Benchmark } from '../lib/benchmark';
import { withPostgres } from '../lib/backing-services';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { withSingleLane } from '../lib/single-lane';
import { firstTokenMs, type TurnTiming } from '../lib/turn-tracker';
import { WORKLOADS } from '../lib/workloads';

const { tokens, turnsPerRepetition, turnsPerConversation, warmup } = WORKLOADS.ttft;

/** The two spans timed, each with and without budgets, and the difference. */
const SPANS = [
  { key: 'ttftBudget', span: 'POST turn → first text-delta', cost: "the budgets' cost to the first token" },
  { key: 'ttftBudget.admission', span: 'POST turn → 202 (admission)', cost: "the budgets' cost to admission" },
] as const;
const QUANTILES = ['p50', 'p99'] as const;

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
    for (const { key, span, cost } of SPANS) {
      for (const quantile of QUANTILES) {
        report.define(`${key}.withBudget.${quantile}`, { label: `${span}, user and key budgets set, ${quantile}`, unit: 'ms', baselineKey: `${key}.without.${quantile}` });
        report.define(`${key}.without.${quantile}`, { label: `${span}, no budget, ${quantile} (interleaved)`, unit: 'ms' });
        report.define(`${key}.cost.${quantile}`, { label: `${cost}, ${quantile} (with − without)`, unit: 'ms' });
      }
    }

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
        const spanOf: Record<(typeof SPANS)[number]['key'], (timing: TurnTiming) => number> = {
          ttftBudget: (timing) => firstTokenMs(timing),
          'ttftBudget.admission': (timing) => timing.acceptedAt! - timing.postedAt,
        };
        for (const { key } of SPANS) {
          const [withBudget, without] = [timed.with, timed.without].map((timings) => latencySummary(timings.map(spanOf[key])));
          for (const quantile of QUANTILES) {
            report.sample(`${key}.withBudget.${quantile}`, withBudget![quantile]);
            report.sample(`${key}.without.${quantile}`, without![quantile]);
            report.sample(`${key}.cost.${quantile}`, withBudget![quantile] - without![quantile]);
          }
        }
      }
      const lines = await withPostgres(async (client) => (await client.query(`SELECT count(*)::int AS n FROM ${schema}.provider_calls`)).rows[0].n as number);
      report.note(
        `all-in-one, default settings; ${turnsPerRepetition} sequential turns of ${tokens} tokens per repetition, half with a day budget on the user and a month budget on its key ` +
          `(USD and token limits, never reached), half with none, alternating in pairs; the ledger held ${lines} lines of the user's at the end, each budget summing them all.`,
      );
    });
  },
};

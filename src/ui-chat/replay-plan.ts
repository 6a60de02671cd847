import type { SwitchyardEvent } from '../events/event';

/**
 * What a replay of a turn must know of everything the log holds of it before it shows the
 * first event: output of a step discarded later (its worker died, its stream broke) is left
 * out, with the discards; a `turn-waiting` the turn went on from does not end the stream; and
 * client calls answered, or calls approved, are not offered or asked again.
 */
export interface ReplayPlan {
  /** Whether the replay shows this event of the turn (one the planner saw). */
  shows(event: SwitchyardEvent): boolean;
  /** Calls whose `tool-result` the replay shows. */
  answered: ReadonlySet<string>;
  /** Calls whose approval the replay shows. */
  approved: ReadonlySet<string>;
}

export interface ReplayPlanner {
  /** The turn's next event, in seq order. */
  see(event: SwitchyardEvent): void;
  plan(): ReplayPlan;
}

/**
 * Learns a replay's plan from one pass over the turn's events, keeping only their seqs and
 * call ids, not the events: the replay then reads them a second time to send them, a page at
 * a time, and never holds the whole turn. Pure.
 */
export function createReplayPlanner(): ReplayPlanner {
  /** Step starts not discarded, each with the last event kept before it (where a discard cuts back to). */
  const stepStarts: { seq: number; step: number; keptBefore: number | null }[] = [];
  /** Seq ranges (inclusive) a discard left out. */
  const discarded: { from: number; to: number }[] = [];
  const results: { toolCallId: string; seq: number }[] = [];
  const approvals: { toolCallId: string; seq: number }[] = [];
  let lastKept: number | null = null;

  return {
    see(event) {
      if (event.type === 'attempt-discarded') {
        const index = stepStarts.findLastIndex((start) => start.step === event.step);
        if (index === -1) return;
        const cut = stepStarts[index]!;
        discarded.push({ from: cut.seq, to: event.seq });
        stepStarts.length = index;
        lastKept = cut.keptBefore;
        for (const facts of [results, approvals]) {
          const kept = facts.filter((fact) => fact.seq < cut.seq);
          facts.splice(0, facts.length, ...kept);
        }
        return;
      }
      if (event.type === 'step-start') stepStarts.push({ seq: event.seq, step: event.step, keptBefore: lastKept });
      if (event.type === 'tool-result') results.push({ toolCallId: event.toolCallId, seq: event.seq });
      if (event.type === 'tool-approval-response' && event.approved) approvals.push({ toolCallId: event.toolCallId, seq: event.seq });
      lastKept = event.seq;
    },
    plan() {
      const last = lastKept;
      const ranges = [...discarded];
      return {
        shows: (event) =>
          event.type !== 'attempt-discarded' && !ranges.some((range) => event.seq >= range.from && event.seq <= range.to) && (event.type !== 'turn-waiting' || event.seq === last),
        answered: new Set(results.map((fact) => fact.toolCallId)),
        approved: new Set(approvals.map((fact) => fact.toolCallId)),
      };
    },
  };
}

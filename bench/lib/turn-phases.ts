import { formatNumber } from './markdown-report';
import { percentile } from './stats';
import type { TurnTiming } from './turn-tracker';

/** The stretches of a turn as a client sees them, from the POST to each event's first arrival. */
const PHASES: [label: string, from: (timing: TurnTiming) => number | undefined, to: (timing: TurnTiming) => number | undefined][] = [
  ['POST → 202', (t) => t.postedAt, (t) => t.acceptedAt],
  ['POST → turn-start', (t) => t.postedAt, (t) => t.marks['turn-start']],
  ['turn-start → step-start', (t) => t.marks['turn-start'], (t) => t.marks['step-start']],
  // Text stretches only for turns without tools (there, the text is the follow-up's).
  ['step-start → first text-delta', (t) => (t.toolProcessingStartAt === undefined ? t.marks['step-start'] : undefined), (t) => t.marks['text-delta']],
  ['last text-delta → step-finish', (t) => (t.toolProcessingStartAt === undefined ? t.lastDeltaAt : undefined), (t) => t.marks['step-finish']],
  ['step-finish → tool_processing_start', (t) => t.marks['step-finish'], (t) => t.marks['tool_processing_start']],
  ['tool_processing_start → tool_processing_complete', (t) => t.marks['tool_processing_start'], (t) => t.marks['tool_processing_complete']],
  // Inside the tool phase: until the calls' results are announced, and from the last to its end.
  ['tool_processing_start → first tool-result', (t) => t.marks['tool_processing_start'], (t) => t.marks['tool-result']],
  ['first → last tool-result', (t) => t.marks['tool-result'], (t) => t.lastToolResultAt],
  ['last tool-result → tool_processing_complete', (t) => t.lastToolResultAt, (t) => t.marks['tool_processing_complete']],
  ['tool_processing_complete → step-start (follow-up)', (t) => t.marks['tool_processing_complete'], (t) => t.followUpStepStartAt],
  ['step-finish (last) → turn-finish', (t) => t.lastStepFinishAt, (t) => t.endedAt],
];

/**
 * "Where the time goes": p50 and p99 of each stretch over the turns given, for RESULTS.md.
 * Stretches a turn does not have (no tools) are left out.
 */
export function phaseBreakdown(timings: TurnTiming[]): string {
  const parts: string[] = [];
  for (const [label, from, to] of PHASES) {
    const durations = timings
      .map((timing) => {
        const start = from(timing);
        const end = to(timing);
        return start === undefined || end === undefined ? undefined : end - start;
      })
      .filter((duration): duration is number => duration !== undefined);
    if (durations.length === 0) continue;
    parts.push(`${label} ${formatNumber(percentile(durations, 50))} / ${formatNumber(percentile(durations, 99))} ms`);
  }
  return `where the time goes, p50 / p99 over ${timings.length} turns, as the client sees it: ${parts.join('; ')}.`;
}

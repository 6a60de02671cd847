import { z } from 'zod';
import { ToolExecutionError } from '../tool-errors';
import { defineBuiltinTool, type BuiltinTool } from './builtin-tool';

export interface CurrentTimeOptions {
  /** The clock; injectable so that tests are deterministic. Default `() => new Date()`. */
  now?: () => Date;
}

/** `current_time`: models do not know what time it is. */
export function createCurrentTimeTool(options: CurrentTimeOptions = {}): BuiltinTool {
  const now = options.now ?? (() => new Date());
  return defineBuiltinTool({
    name: 'current_time',
    description:
      'Returns the current date and time: in UTC (ISO 8601), and in the given IANA time zone (default UTC) ' + 'both as ISO 8601 with its offset and formatted for people.',
    input: z.strictObject({
      timeZone: z.string().min(1).max(64).optional().describe('An IANA time zone such as "Europe/Paris" or "America/New_York"; default "UTC"'),
    }),
    timeoutMs: 1_000,
    async run({ timeZone = 'UTC' }) {
      return describeInstant(now(), timeZone);
    },
  });
}

/** The instant in UTC and in `timeZone`. Throws `invalid_time_zone` for a zone Intl does not know. */
export function describeInstant(instant: Date, timeZone: string): { iso: string; timeZone: string; localIso: string; formatted: string } {
  let parts: Intl.DateTimeFormatPart[];
  let formatted: string;
  try {
    parts = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    }).formatToParts(instant);
    formatted = new Intl.DateTimeFormat('en-US', { timeZone, dateStyle: 'full', timeStyle: 'long' }).format(instant);
  } catch {
    throw new ToolExecutionError('invalid_time_zone', `unknown time zone "${timeZone}"; use an IANA name such as "Europe/Paris" or "UTC"`);
  }
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((each) => each.type === type)?.value ?? '';
  // "GMT+05:30" → "+05:30"; plain "GMT" is UTC itself.
  const offset = part('timeZoneName').replace(/^GMT/, '') || '+00:00';
  const localIso = `${part('year')}-${part('month')}-${part('day')}T${part('hour')}:${part('minute')}:${part('second')}${offset}`;
  // The zone as asked: ICU would rename some to their legacy names (Asia/Kolkata → Asia/Calcutta).
  return { iso: instant.toISOString(), timeZone, localIso, formatted };
}

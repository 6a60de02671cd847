import { z } from 'zod';
import { describeZodIssues } from '../errors/zod-issues';

const count = z.number().int().min(0);

/**
 * A fault the scripted model applies to every chat-completion request while it is set, whatever
 * the request's scenario: so that two scripted models behind one Switchyard model are two
 * providers, one of which fails on demand (a test, or a developer trying fallback). The
 * request is recorded first, as any other.
 * - `refuse`: answer this HTTP error (`{status, message?, type?, code?, retryAfterSeconds?}`);
 * - `hang: true`: take the request and send nothing, not even headers, until the client gives up;
 * - `cutAfterTokens: N`: stream N tokens of the answer, then drop the connection;
 * - `stallAfterTokens: N`: stream N tokens, then go silent with the connection open.
 * `times` (default: until cleared) applies it to that many requests, then it clears itself.
 */
export const faultSchema = z
  .strictObject({
    refuse: z
      .strictObject({
        status: z.number().int().min(400).max(599),
        message: z.string().optional(),
        type: z.string().optional(),
        code: z.string().optional(),
        retryAfterSeconds: z.number().int().min(0).optional(),
      })
      .optional(),
    hang: z.literal(true).optional(),
    cutAfterTokens: count.optional(),
    stallAfterTokens: count.optional(),
    times: z.number().int().positive().optional(),
  })
  .refine((fault) => [fault.refuse, fault.hang, fault.cutAfterTokens, fault.stallAfterTokens].filter((each) => each !== undefined).length === 1, {
    error: 'one of refuse, hang, cutAfterTokens, stallAfterTokens',
  });
export type Fault = z.output<typeof faultSchema>;

export type FaultParse = { ok: true; fault: Fault } | { ok: false; message: string };

export function parseFault(json: unknown): FaultParse {
  const parsed = faultSchema.safeParse(json);
  return parsed.success ? { ok: true, fault: parsed.data } : { ok: false, message: describeZodIssues(parsed.error.issues) };
}

/** The fault now set on a scripted model; `take` is what one request gets (and counts down `times`). */
export class FaultControl {
  private fault: Fault | null = null;
  private left = Infinity;

  set(fault: Fault | null): void {
    this.fault = fault;
    this.left = fault?.times ?? Infinity;
  }

  get current(): Fault | null {
    return this.fault;
  }

  take(): Fault | null {
    const fault = this.fault;
    if (!fault) return null;
    if (--this.left <= 0) this.set(null);
    return fault;
  }
}

import { httpApi, type HttpOptions } from '@switchyard/client';

export interface ApprovalsCliOptions extends HttpOptions {
  fetch: typeof fetch;
  /** One line of output. */
  print(line: string): void;
}

interface PendingPage {
  data: Record<string, unknown>[];
  nextCursor: string | null;
}

/**
 * `approvals list`: every call of the user's conversations that waits for a decision, newest
 * first, one JSON line each (what `approve` needs is in it: `turnId`, `toolCallId`). Returns how many.
 */
export async function listPendingApprovals(options: ApprovalsCliOptions): Promise<number> {
  const http = httpApi(options);
  let count = 0;
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ status: 'pending', limit: '100', ...(cursor ? { cursor } : {}) });
    const page: PendingPage = await http<PendingPage>('GET', `/v1/approvals?${query}`);
    for (const approval of page.data) options.print(JSON.stringify(approval));
    count += page.data.length;
    cursor = page.nextCursor;
  } while (cursor);
  return count;
}

/**
 * `approve <turnId> <toolCallId> [--deny] [--reason ...] [--args JSON]`: the stored decision.
 * Sent once: a refusal (decided the other way already, not found, args that do not fit) is the
 * server's message, for the person to read.
 */
export async function decideApproval(
  decision: { turnId: string; toolCallId: string; approved: boolean; reason?: string; args?: Record<string, unknown> },
  options: ApprovalsCliOptions,
): Promise<void> {
  const { turnId, ...body } = decision;
  const stored = await httpApi(options)('POST', `/v1/turns/${encodeURIComponent(turnId)}/approvals`, body);
  options.print(JSON.stringify(stored, null, 2));
}

/** `--args` as typed: a JSON object, or a message saying why not. */
export function parseArgsOption(text: string): Record<string, unknown> | string {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // the message below says what is expected
  }
  return `--args must be a JSON object, e.g. --args '{"amount": 50}'`;
}

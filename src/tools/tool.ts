/*
 * The tool contract shared by the registry, the turn engine and the API: what a tool looks
 * like from outside (a descriptor), what one execution gets (a context) and what it gives back
 * (an outcome, never an exception).
 */

import type { ToolKind } from '@switchyard/protocol';

export interface ToolDescriptor {
  name: string;
  description: string;
  /** A JSON Schema for the arguments object (no `$schema`). */
  inputSchema: Record<string, unknown>;
  kind: ToolKind;
  /** Per attempt; for a client tool, how long the server waits for a client's answer. */
  timeoutMs: number;
  /** Extra attempts after the first, for retryable failures. */
  retries: number;
  /** A call of it runs only once a person approves it (docs/API.md "Tool approvals"). Default false. */
  needsApproval?: boolean;
  /** How long a call waits for that decision before it is denied (`approval_timeout`). Default 24 h. */
  approvalTimeoutMs?: number;
}

/** How long a call waits for a person's decision unless its tool says otherwise. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 24 * 3600 * 1000;

export interface ToolCallContext {
  turnId: string;
  toolCallId: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** Aborted when the turn is cancelled or the job is lost; the tool stops as soon as it can. */
  signal: AbortSignal;
}

/** `retryable` is the caller's hint whether another attempt may succeed; it is not sent to the model. */
export type ToolError = { code: string; message: string; retryable: boolean; [key: string]: unknown };

export type ToolOutcome = { ok: true; result: unknown } | { ok: false; error: ToolError };

export type ArgumentCheck = { ok: true; args: unknown } | { ok: false; error: { code: 'invalid_arguments'; message: string } };

export interface ToolRegistry {
  /** Sorted by name. */
  list(): ToolDescriptor[];
  get(name: string): ToolDescriptor | undefined;
  /**
   * Parses the model's JSON text and validates it against the tool's schema. An unknown tool is
   * `invalid_arguments` too, so that the model can correct itself.
   */
  checkArguments(name: string, argumentsText: string): ArgumentCheck;
  /**
   * One attempt, bounded by the tool's `timeoutMs` and `ctx.signal`. Never throws: a thrown error
   * becomes a retryable failure. Retrying is the caller's job (a BullMQ job per call). A client
   * tool answers `{ok: false, code: 'client_tool'}`: clients run those.
   */
  execute(name: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome>;
  /** Stops the MCP servers; later executions fail. */
  close(): Promise<void>;
}

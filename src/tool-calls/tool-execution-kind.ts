import type { ToolSettlement } from './tool-attempt-decision';

/** A record marked running, read the same way whatever its kind. */
export interface RunningTool {
  toolName: string;
  args: unknown;
  /** This attempt, counted on the record: 1 for the first. */
  attempts: number;
  /** The model's id of the call, for the span; an invocation has none. */
  toolCallId?: string;
  /** What the attempt's log lines add to the job's ids. */
  logFields: Record<string, unknown>;
}

/** What the runner reads of a stored outcome, for its log line. */
export interface SettledTool {
  status: string;
  error: { code: string } | null;
}

/**
 * One kind of tool execution (a turn's call, a direct invocation), as the tool job runner
 * sees it: the record an attempt is counted on and its outcome stored in, and what is done with
 * that outcome. The lifecycle around them is the runner's alone (tool-job-runner.ts).
 */
export interface ToolExecutionKind<Settled extends SettledTool> {
  /**
   * The ids every attempt gives the tool. An http tool sends `<turnId>:<toolCallId>` as its
   * Idempotency-Key: the same on every attempt, after a crash too.
   */
  readonly ids: { turnId: string; toolCallId: string };
  /**
   * Counts an attempt on the record; null when the record is settled and must not run again;
   * `heldForMs` when a local tool slot of the process that committed the step runs it (the
   * attempt is left to that slot, and looked at again once the hold would lapse).
   */
  markRunning(): Promise<RunningTool | null | { heldForMs: number }>;
  /**
   * A settled record met again: its job was redelivered, maybe before its outcome was announced.
   * `heldForMs` when the local tool slot that settled it still runs (it announces it): looked at again then.
   */
  announceAgain(): Promise<void | { heldForMs: number }>;
  /** Stores the outcome; null when one is stored already (the first one wins). */
  settle(settlement: ToolSettlement): Promise<Settled | null>;
  /** Tells of an outcome just stored. */
  announce(settled: Settled): Promise<void>;
}

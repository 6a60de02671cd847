import { TERMINAL_EVENT_TYPES, type PendingApproval, type SwitchyardEvent } from '@switchyard/protocol';

export type ToolCallRequest = Extract<SwitchyardEvent, { type: 'tool-call-request' }>;

/** A call that waits for a person's decision (a `tool-approval-request`, or a pending approval read over HTTP). */
export type ApprovalRequest = Omit<PendingApproval, 'requestedAt'>;

/**
 * What one subscription has seen: the last seq (where a resubscription resumes), where the
 * replay ends, and the client-tool requests and approvals still unanswered. No I/O: the client feeds it frames
 * and acts on its answers.
 */
export class ConversationFeed {
  /** The last seq delivered; undefined until the first event (resume from the oldest kept). */
  lastSeq: number | undefined;
  /** The latest seq when the current subscription was made: events up to it are a replay. */
  private replayUntil = 0;
  /**
   * Calls are keyed by turn and call id ({@link callKey}): providers number calls afresh in
   * every answer, so `call_0` comes again in each turn of a conversation.
   */
  private readonly unanswered = new Map<string, ToolCallRequest>();
  private readonly handled = new Set<string>();
  private readonly undecided = new Map<string, ApprovalRequest>();
  /** Approvals seen decided (or their turn ended): a pending list read before the decision must not bring them back. */
  private readonly decided = new Set<string>();
  private readonly shown = new Set<string>();

  constructor(after: number | undefined) {
    this.lastSeq = after;
  }

  subscribed(latestSeq: number): void {
    this.replayUntil = latestSeq;
  }

  /**
   * `deliver`: the event is new (a seq at or below the last one is a duplicate of a resumed
   * replay). `gap`: an event is missing before it; the client resubscribes after `lastSeq`.
   */
  accept(event: SwitchyardEvent): 'deliver' | 'duplicate' | 'gap' {
    const verdict = this.passOver(event.seq);
    if (verdict !== 'deliver') return verdict;
    if (event.type === 'tool-call-request') this.unanswered.set(callKey(event.turnId, event.toolCallId), event);
    if (event.type === 'tool-approval-request') this.addApprovals([event]);
    if (event.type === 'tool-approval-response' || event.type === 'tool-result') this.settleApproval(event.turnId, event.toolCallId);
    if (event.type === 'tool-result') this.unanswered.delete(callKey(event.turnId, event.toolCallId));
    if (TERMINAL_EVENT_TYPES.has(event.type)) {
      for (const [key, request] of this.unanswered) if (request.turnId === event.turnId) this.unanswered.delete(key);
      for (const request of [...this.undecided.values()]) if (request.turnId === event.turnId) this.settleApproval(request.turnId, request.toolCallId);
    }
    return 'deliver';
  }

  /** An event this client cannot read: only its seq counts (`deliver`: it was the next one). */
  passOver(seq: number): 'deliver' | 'duplicate' | 'gap' {
    if (this.lastSeq !== undefined && seq <= this.lastSeq) return 'duplicate';
    if (this.lastSeq !== undefined && seq > this.lastSeq + 1) return 'gap';
    this.lastSeq = seq;
    return 'deliver';
  }

  /** The client-tool requests seen and not answered yet: a reload asks the server about them. */
  openRequests(): ToolCallRequest[] {
    return [...this.unanswered.values()];
  }

  /**
   * After a reload over HTTP: resume from the conversation's last seq, with the client-tool
   * calls the server shows unanswered (`open`) and the approvals it lists pending (`undecided`). The events skipped may have answered some of the
   * requests seen before, or asked for others; one this client ran already is not run again.
   */
  reloaded(lastSeq: number, open: ToolCallRequest[], undecided: ApprovalRequest[] = []): void {
    this.lastSeq = lastSeq;
    this.unanswered.clear();
    for (const request of open) this.unanswered.set(callKey(request.turnId, request.toolCallId), request);
    this.undecided.clear();
    this.addApprovals(undecided);
  }

  /** Approvals the server lists as pending (asked before this subscription's events, or among those a reload skipped). */
  addApprovals(pending: ApprovalRequest[]): void {
    for (const request of pending) {
      const key = callKey(request.turnId, request.toolCallId);
      if (this.decided.has(key)) continue;
      const { conversationId, turnId, toolCallId, toolName, args, approvalId, expiresAt } = request;
      this.undecided.set(key, { conversationId, turnId, toolCallId, toolName, args, approvalId, expiresAt });
    }
  }

  private settleApproval(turnId: string, toolCallId: string): void {
    const key = callKey(turnId, toolCallId);
    this.decided.add(key);
    this.undecided.delete(key);
  }

  /** Approvals to show now, each once: as {@link takeRunnable}, only once the replay is over. */
  takeUndecided(): ApprovalRequest[] {
    if ((this.lastSeq ?? 0) < this.replayUntil) return [];
    const fresh = [...this.undecided.entries()].filter(([key]) => !this.shown.has(key));
    for (const [key] of fresh) this.shown.add(key);
    return fresh.map(([, request]) => request);
  }

  /**
   * Client-tool requests to run now: only once the replay is over, so that a request another
   * client answered before we subscribed (its `tool-result` is in the replay) never runs again.
   */
  takeRunnable(): ToolCallRequest[] {
    if ((this.lastSeq ?? 0) < this.replayUntil) return [];
    const runnable = [...this.unanswered.entries()].filter(([key]) => !this.handled.has(key));
    for (const [key] of runnable) this.handled.add(key);
    return runnable.map(([, request]) => request);
  }
}

const callKey = (turnId: string, toolCallId: string) => `${turnId}\n${toolCallId}`;

import type { SwitchyardEvent, Usage } from '@switchyard/protocol';

/** One tool call as a client shows it, from its first fragment to its result. */
export interface ToolCallView {
  toolCallId: string;
  toolName: string;
  step: number;
  /** The JSON arguments as streamed so far. */
  argsText: string;
  args?: unknown;
  status: 'streaming' | 'ready' | 'invalid' | 'running' | 'awaiting-approval' | 'awaiting-client' | 'succeeded' | 'failed';
  /** The call needs a person's approval: asked, then (`approved` set) decided. A denied call ends `failed` with code `denied`. */
  approval?: { approvalId: string; expiresAt: string; approved?: boolean; reason?: string };
  result?: unknown;
  error?: { code: string; message: string };
  attempts?: number;
  durationMs?: number;
}

export interface StepView {
  step: number;
  text: string;
  reasoning: string;
  toolCallIds: string[];
}

export interface TurnView {
  turnId: string;
  conversationId: string;
  status: 'queued' | 'running' | 'running-tools' | 'waiting-for-client' | 'waiting-for-approval' | 'completed' | 'failed' | 'cancelled';
  attempt: number;
  steps: StepView[];
  /** The step now streaming (null before the first, and after a discard until the step restarts). */
  currentStep: number | null;
  toolCalls: Record<string, ToolCallView>;
  /** Every step's text, in order. */
  text: string;
  finishReason?: string;
  usage?: Usage;
  error?: { code: string; message: string };
  /** Each time a step went on to its model's next target (`provider-fallback`), in order. */
  fallbacks: ProviderFallbackView[];
  /** Each time the conversation's earlier messages were summarised before a step (`compaction-start`, `compaction-finish`), in order. */
  compactions: CompactionView[];
  /** The seq of the last event applied. */
  lastSeq: number;
}

/** A step that went from one target of its model to the next: a provider and the model's name there each. */
export interface ProviderFallbackView {
  step: number;
  from: { provider: string; model: string };
  to: { provider: string; model: string };
  reason: string;
}

/** A compaction: running until its tokens before and after are known. */
export interface CompactionView {
  compactionId: string;
  status: 'running' | 'done';
  tokensBefore?: number;
  tokensAfter?: number;
}

export function emptyTurnView(turnId: string, conversationId: string): TurnView {
  return { turnId, conversationId, status: 'queued', attempt: 0, steps: [], currentStep: null, toolCalls: {}, text: '', fallbacks: [], compactions: [], lastSeq: 0 };
}

/** Whether the turn has ended (no more events will come for it). */
export const isTurnOver = (view: TurnView) => view.status === 'completed' || view.status === 'failed' || view.status === 'cancelled';

/**
 * Applies one of the turn's events (in seq order) and returns the new view; the old one is not
 * changed, so a UI can compare them. `attempt-discarded` drops what the discarded attempt
 * showed of its step, as docs/API.md asks of clients. Pure.
 */
export function applyTurnEvent(previous: TurnView, event: SwitchyardEvent): TurnView {
  const view: TurnView = { ...previous, steps: previous.steps.map((step) => ({ ...step })), toolCalls: { ...previous.toolCalls }, lastSeq: event.seq };
  const currentStep = () => view.steps.find((step) => step.step === view.currentStep);
  const updateCall = (toolCallId: string, change: Partial<ToolCallView>) => {
    const call = view.toolCalls[toolCallId];
    if (call) view.toolCalls[toolCallId] = { ...call, ...change };
  };
  switch (event.type) {
    case 'turn-start':
      view.attempt = event.attempt;
      view.status = 'running';
      break;
    case 'step-start':
      dropStep(view, event.step);
      view.steps.push({ step: event.step, text: '', reasoning: '', toolCallIds: [] });
      view.currentStep = event.step;
      view.status = 'running';
      break;
    case 'text-delta': {
      const step = currentStep();
      if (step) step.text += event.delta;
      break;
    }
    case 'reasoning-delta': {
      const step = currentStep();
      if (step) step.reasoning += event.delta;
      break;
    }
    case 'tool-call-start': {
      const step = currentStep();
      if (!step) break;
      step.toolCallIds.push(event.toolCallId);
      view.toolCalls[event.toolCallId] = { toolCallId: event.toolCallId, toolName: event.toolName, step: step.step, argsText: '', status: 'streaming' };
      break;
    }
    case 'tool-call-delta': {
      const call = view.toolCalls[event.toolCallId];
      if (call) updateCall(event.toolCallId, { argsText: call.argsText + event.argsTextDelta });
      break;
    }
    case 'tool-call-end':
      updateCall(event.toolCallId, event.error ? { status: 'invalid', error: event.error } : { status: 'ready', args: event.args });
      break;
    case 'tool_processing_start':
      view.status = 'running-tools';
      for (const call of event.toolCalls) if (view.toolCalls[call.toolCallId]?.status === 'ready') updateCall(call.toolCallId, { status: 'running' });
      break;
    case 'tool-call-request':
      updateCall(event.toolCallId, { status: 'awaiting-client' });
      break;
    case 'tool-approval-request':
      updateCall(event.toolCallId, { status: 'awaiting-approval', approval: { approvalId: event.approvalId, expiresAt: event.expiresAt } });
      break;
    case 'tool-approval-response': {
      const call = view.toolCalls[event.toolCallId];
      const decision = { approved: event.approved, ...(event.reason === undefined ? {} : { reason: event.reason }) };
      // An approved call runs (a client tool's request comes next); a denied one waits for its `denied` result.
      if (call?.approval) updateCall(event.toolCallId, { status: event.approved ? 'running' : call.status, approval: { ...call.approval, ...decision } });
      if (view.status === 'waiting-for-approval') view.status = 'running-tools';
      break;
    }
    case 'tool-result':
      updateCall(event.toolCallId, {
        status: event.error ? 'failed' : 'succeeded',
        ...(event.error ? { error: event.error } : { result: event.result }),
        attempts: event.attempts,
        durationMs: event.durationMs,
      });
      break;
    case 'turn-waiting':
      // Parked on approvals alone: nothing happens until a person decides.
      view.status = event.toolCallIds.every((id) => view.toolCalls[id]?.status === 'awaiting-approval') ? 'waiting-for-approval' : 'waiting-for-client';
      break;
    case 'tool_processing_complete':
      view.status = 'running';
      break;
    case 'attempt-discarded':
      dropStep(view, event.step);
      view.currentStep = null;
      break;
    case 'provider-retry':
      view.status = 'queued';
      break;
    case 'provider-fallback':
      view.fallbacks = [...view.fallbacks, { step: event.step, from: event.from, to: event.to, reason: event.reason }];
      break;
    case 'compaction-start':
      view.compactions = [...view.compactions.filter((each) => each.compactionId !== event.compactionId), { compactionId: event.compactionId, status: 'running' }];
      break;
    case 'compaction-finish':
      view.compactions = [
        ...view.compactions.filter((each) => each.compactionId !== event.compactionId),
        { compactionId: event.compactionId, status: 'done', tokensBefore: event.tokensBefore, tokensAfter: event.tokensAfter },
      ];
      break;
    case 'turn-finish':
      Object.assign(view, { status: 'completed', finishReason: event.finishReason, usage: event.usage });
      break;
    case 'turn-error':
      Object.assign(view, { status: 'failed', error: { code: event.error.code, message: event.error.message } });
      break;
    case 'turn-cancelled':
      view.status = 'cancelled';
      break;
    case 'step-finish':
      break;
  }
  view.text = view.steps.map((step) => step.text).join('');
  return view;
}

/** Folds a turn's events into its view. */
export function turnViewOf(turnId: string, conversationId: string, events: Iterable<SwitchyardEvent>): TurnView {
  let view = emptyTurnView(turnId, conversationId);
  for (const event of events) if (event.turnId === turnId) view = applyTurnEvent(view, event);
  return view;
}

function dropStep(view: TurnView, step: number): void {
  const dropped = view.steps.find((each) => each.step === step);
  if (!dropped) return;
  view.steps = view.steps.filter((each) => each !== dropped);
  for (const toolCallId of dropped.toolCallIds) delete view.toolCalls[toolCallId];
}

import type { ToolProcessingData, ToolRunFacts, TurnMetadata } from '@switchyard/protocol';
import type { SwitchyardEvent } from '../events/event';
import type { ReplayPlan } from './replay-plan';

export type { ToolProcessingData, ToolRunFacts, TurnMetadata };

/**
 * The chunks of the AI SDK's UI message stream protocol that Switchyard sends (the `ai`
 * package's `UIMessageChunk`, written out so the server does not depend on the client SDK).
 */
export type UiChunk =
  | { type: 'start'; messageId: string }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'text-start' | 'text-end' | 'reasoning-start' | 'reasoning-end'; id: string }
  | { type: 'text-delta' | 'reasoning-delta'; id: string; delta: string }
  | { type: 'tool-input-start'; toolCallId: string; toolName: string; providerExecuted?: true }
  | { type: 'tool-input-delta'; toolCallId: string; inputTextDelta: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown; providerExecuted?: true }
  | { type: 'tool-input-error'; toolCallId: string; toolName: string; input: unknown; errorText: string; providerExecuted?: true }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown; providerExecuted?: true; toolMetadata: ToolRunFacts }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string; providerExecuted?: true; toolMetadata: ToolRunFacts }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string }
  | { type: 'tool-output-denied'; toolCallId: string }
  | { type: 'data-tool-processing'; id: string; data: ToolProcessingData }
  | { type: 'data-attempt-discarded'; data: { attempt: number; step: number } }
  | { type: 'data-provider-fallback'; data: { step: number; from: ModelTarget; to: ModelTarget; reason: string } }
  | { type: 'data-compaction'; data: { compactionId: string; tokensBefore: number; tokensAfter: number } }
  | { type: 'error'; errorText: string }
  | { type: 'message-metadata'; messageMetadata: TurnMetadata }
  | { type: 'finish'; finishReason: UiFinishReason; messageMetadata: TurnMetadata }
  | { type: 'abort'; reason: string };

/** A provider and the model's name there. */
export interface ModelTarget {
  provider: string;
  model: string;
}

export type UiFinishReason = 'stop' | 'length' | 'tool-calls' | 'content-filter' | 'error' | 'other';

export interface UiChunkMapper {
  /** The chunks for one of the turn's events; `end` when the stream ends after them. */
  map(event: SwitchyardEvent): { chunks: UiChunk[]; end: boolean };
}

/**
 * Maps one turn's events, in seq order, to UI message stream chunks (docs/API.md, "AI SDK
 * compatible routes"). Server-run tools are `providerExecuted`, so the AI SDK neither calls
 * `onToolCall` for them nor waits for their output; client tools are not. Pure.
 */
export function createUiChunkMapper(options: {
  turnId: string;
  isClientTool(toolName: string): boolean;
  /**
   * The step the turn is in where the stream starts, for a stream that starts after that step's
   * `step-start` (the POST that answers client tools streams from the answers on). Default 0.
   */
  step?: number;
  /**
   * Client calls answered before this stream began (a replay): their `tool-call-request` is not
   * offered as `tool-input-available`, on which the AI SDK calls `onToolCall`, so a resume or a
   * second tab never runs them again; their `tool-output-available` follows.
   */
  answered?: ReadonlySet<string>;
  /**
   * Calls approved before this stream began (a replay): their approval is not asked again (the
   * AI SDK has no chunk for a decision, so a replayed request would show the call undecided).
   */
  approved?: ReadonlySet<string>;
}): UiChunkMapper {
  let step = options.step ?? 0;
  let openPart: { kind: 'text' | 'reasoning'; id: string } | null = null;
  /** Calls whose start this stream sent: a fragment of any other would be refused by the reader. */
  const toolNames = new Map<string, string>();
  /** Calls this stream asked a decision for, not decided yet: a wait on only these is `waiting_approval`. */
  const undecided = new Set<string>();
  /** Denied calls: shown `output-denied`, so their `tool-result` (the model's error) is not sent. */
  const denied = new Set<string>();
  /** Client calls this stream offered to `onToolCall`: a call asked again (a repeated approval) is not run twice. */
  const offered = new Set<string>();
  const executedBy = (toolName: string): { providerExecuted?: true } => (options.isClientTool(toolName) ? {} : { providerExecuted: true });

  const closePart = (): UiChunk[] => {
    if (!openPart) return [];
    const closing: UiChunk = { type: `${openPart.kind}-end`, id: openPart.id };
    openPart = null;
    return [closing];
  };
  const appendTo = (kind: 'text' | 'reasoning', seq: number, delta: string): UiChunk[] => {
    const chunks: UiChunk[] = [];
    if (openPart?.kind !== kind) {
      chunks.push(...closePart());
      openPart = { kind, id: `${kind[0]}${seq}` };
      chunks.push({ type: `${kind}-start`, id: openPart.id });
    }
    chunks.push({ type: `${kind}-delta`, id: openPart.id, delta });
    return chunks;
  };
  const go = (...chunks: UiChunk[]) => ({ chunks, end: false });
  const stop = (...chunks: UiChunk[]) => ({ chunks, end: true });

  return {
    map(event) {
      switch (event.type) {
        case 'step-start':
          step = event.step;
          return go(...closePart(), { type: 'start-step' });
        case 'text-delta':
          return go(...appendTo('text', event.seq, event.delta));
        case 'reasoning-delta':
          return go(...appendTo('reasoning', event.seq, event.delta));
        case 'tool-call-start':
          toolNames.set(event.toolCallId, event.toolName);
          return go(...closePart(), { type: 'tool-input-start', toolCallId: event.toolCallId, toolName: event.toolName, ...executedBy(event.toolName) });
        case 'tool-call-delta':
          if (!toolNames.has(event.toolCallId)) return go();
          return go({ type: 'tool-input-delta', toolCallId: event.toolCallId, inputTextDelta: event.argsTextDelta });
        case 'tool-call-end': {
          const toolName = toolNames.get(event.toolCallId);
          if (toolName === undefined) return go();
          const call = { toolCallId: event.toolCallId, toolName, input: event.args, ...executedBy(toolName) };
          if (event.error) return go({ type: 'tool-input-error', ...call, errorText: describe(event.error) });
          // A client call is offered when it is asked of clients (its `tool-call-request`), not
          // here: one that needs approval is asked only once approved, and the AI SDK runs a
          // client call as soon as its input is available.
          if (options.isClientTool(toolName)) return go();
          return go({ type: 'tool-input-available', ...call });
        }
        case 'tool-call-request':
          if (options.answered?.has(event.toolCallId) || offered.has(event.toolCallId)) return go();
          offered.add(event.toolCallId);
          return go({ type: 'tool-input-available', toolCallId: event.toolCallId, toolName: event.toolName, input: event.args });
        case 'tool_processing_start':
          return go({ type: 'data-tool-processing', id: `${options.turnId}:${step}`, data: { status: 'start', step } });
        case 'tool_processing_complete':
          return go({
            type: 'data-tool-processing',
            id: `${options.turnId}:${step}`,
            data: { status: 'complete', step, results: event.results, failed: event.failed },
          });
        case 'tool-approval-request':
          if (options.approved?.has(event.toolCallId)) return go();
          undecided.add(event.toolCallId);
          return go({ type: 'tool-approval-request', approvalId: event.approvalId, toolCallId: event.toolCallId });
        case 'tool-approval-response':
          undecided.delete(event.toolCallId);
          if (event.approved) return go();
          denied.add(event.toolCallId);
          return go({ type: 'tool-output-denied', toolCallId: event.toolCallId });
        case 'tool-result': {
          if (denied.has(event.toolCallId)) return go();
          const toolName = toolNames.get(event.toolCallId);
          const facts = { toolCallId: event.toolCallId, ...(toolName === undefined ? {} : executedBy(toolName)) };
          const toolMetadata = { attempts: event.attempts, durationMs: event.durationMs };
          return go(
            event.error
              ? { type: 'tool-output-error', ...facts, errorText: describe(event.error), toolMetadata }
              : { type: 'tool-output-available', ...facts, output: event.result ?? null, toolMetadata },
          );
        }
        case 'step-finish':
          return go(...closePart(), { type: 'finish-step' });
        case 'attempt-discarded':
          return go(...closePart(), { type: 'data-attempt-discarded', data: { attempt: event.attempt, step: event.step } });
        case 'provider-fallback':
          return go(...closePart(), { type: 'data-provider-fallback', data: { step: event.step, from: event.from, to: event.to, reason: event.reason } });
        case 'turn-waiting': {
          const turnStatus = event.toolCallIds.every((id) => undecided.has(id)) ? 'waiting_approval' : 'waiting_tools';
          return stop(...closePart(), { type: 'finish', finishReason: 'tool-calls', messageMetadata: { turnStatus } });
        }
        case 'turn-finish':
          return stop(...closePart(), ...closingChunks({ status: 'completed', finishReason: event.finishReason, error: null }));
        case 'turn-error':
          return stop(...closePart(), ...closingChunks({ status: 'failed', finishReason: null, error: event.error }));
        case 'turn-cancelled':
          return stop(...closePart(), ...closingChunks({ status: 'cancelled', finishReason: null, error: null }));
        case 'compaction-finish':
          return go(...closePart(), { type: 'data-compaction', data: { compactionId: event.compactionId, tokensBefore: event.tokensBefore, tokensAfter: event.tokensAfter } });
        case 'turn-start':
        case 'provider-retry':
        case 'compaction-start':
          return go();
      }
    },
  };
}

/** The chunks that end a turn's stream: at its end event, or when it ended while its events are no longer kept. */
export function closingChunks(turn: { status: string; finishReason: string | null; error: { code: string; message: string } | null }): UiChunk[] {
  if (turn.status === 'cancelled') {
    // `abort` carries no metadata: the AI SDK takes it from a chunk of its own.
    return [
      { type: 'message-metadata', messageMetadata: { turnStatus: 'cancelled' } },
      { type: 'abort', reason: 'cancelled' },
    ];
  }
  if (turn.status === 'failed') {
    return [
      { type: 'error', errorText: turn.error ? describe(turn.error) : 'the turn failed' },
      { type: 'finish', finishReason: 'error', messageMetadata: { turnStatus: 'failed' } },
    ];
  }
  return [{ type: 'finish', finishReason: uiFinishReason(turn.finishReason ?? 'stop'), messageMetadata: { turnStatus: 'completed' } }];
}

/** A turn's finish reason (the provider's, or Switchyard's own) by the AI SDK's names. */
export function uiFinishReason(finishReason: string): UiFinishReason {
  switch (finishReason) {
    case 'stop':
    case 'length':
      return finishReason;
    case 'tool_calls':
      return 'tool-calls';
    case 'content_filter':
      return 'content-filter';
    default:
      return 'other';
  }
}

/**
 * The replay of what the log already holds of a turn, shown as the turn stands now (see
 * ReplayPlan: a discarded step's output left out, a wait the turn went on from not ending it,
 * answered client calls not offered to `onToolCall` again). `map` gives the chunks of the turn's
 * events in seq order, none for one the plan leaves out, and `end` where the turn ended or waits
 * on client tools now. Pure.
 */
export function startReplay(input: { turnId: string; isClientTool(toolName: string): boolean; plan: ReplayPlan; step?: number }): UiChunkMapper & {
  /** Maps what comes after the replay, live. */
  mapper: UiChunkMapper;
} {
  const { plan } = input;
  const mapper = createUiChunkMapper({ turnId: input.turnId, isClientTool: input.isClientTool, answered: plan.answered, approved: plan.approved, step: input.step });
  return { map: (event) => (plan.shows(event) ? mapper.map(event) : { chunks: [], end: false }), mapper };
}

function describe(error: { code: string; message: string }): string {
  return `${error.code}: ${error.message}`;
}

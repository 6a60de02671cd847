import type { ToolCallStatus } from '../turn-answers.js';
import type { ToolProcessingData, ToolRunFacts, TurnMetadata } from './ui-message-parts.js';

/** A message as `GET /v1/conversations/:id` lists it. */
export interface StoredMessage {
  /** `msg_…`: what `fromMessageId` (edit, regenerate) and a fork's `messageId` name. */
  id?: string;
  role: 'user' | 'assistant' | 'tool';
  content: unknown;
  toolCalls?: { id: string; function: { name: string; arguments: string } }[];
  toolCallId?: string;
  /** Null for context given without a turn (a batch item's assistant entries, a fork's copies). */
  turnId: string | null;
  /** The turn that replaced it (an edit or a regenerate); such messages are not on the conversation's path. */
  supersededBy?: string;
  /** What a cancelled or interrupted step had streamed (its unfinished tool calls left out). */
  incomplete?: true;
  /** The reasoning such a step had streamed. */
  reasoning?: string;
}

/** A turn of the conversation. */
export interface StoredTurn {
  id: string;
  /** The edit or regenerate that replaced the turn's messages: it is not on the path. */
  supersededBy?: string | null;
  status: TurnMetadata['turnStatus'];
  /** What the turn was asked: its user message until the turn starts and stores it; null for a regenerate (it answers an earlier turn's). */
  input: unknown;
}

/** A tool call of a turn, with what its `tool-result` event says once it settled. */
export interface StoredToolCall extends ToolRunFacts {
  turnId: string;
  toolCallId: string;
  step: number;
  /** A client tool (the browser runs it); the others Switchyard runs (`providerExecuted`). */
  runsOnClient: boolean;
  status: ToolCallStatus;
  /** Null when the call was refused before it ran (invalid arguments, a tool not offered). */
  args: unknown;
  /** The arguments as the model streamed them. */
  argumentsText?: string;
  result: unknown;
  error: { code: string; message: string } | null;
  /** The call's approval when it needed one: its id, and the decision once taken (null while pending). */
  approval?: { id: string; decision: { approved: boolean; reason: string | null } | null };
}

/** A conversation's stored history: its messages in order, its turns oldest first, and their tool calls. */
export interface StoredHistory {
  messages: StoredMessage[];
  turns: StoredTurn[];
  toolCalls: StoredToolCall[];
}

/**
 * The AI SDK 6 `UIMessage` parts the history is made of (the `ai` package's types, written out as
 * ui-message-chunks.ts does, so that this module depends on nothing).
 */
export type HistoryUiPart =
  | { type: 'step-start' }
  | { type: 'text'; text: string; state?: 'done' }
  | { type: 'reasoning'; text: string; state: 'done' }
  | { type: 'file'; mediaType: string; url: string }
  | HistoryToolPart
  | { type: 'data-tool-processing'; id: string; data: ToolProcessingData };

export type HistoryToolPart = { type: `tool-${string}`; toolCallId: string; providerExecuted?: true; toolMetadata?: ToolRunFacts } & (
  | { state: 'input-available'; input: unknown }
  | { state: 'output-available'; input: unknown; output: unknown; approval?: HistoryApproval<true> }
  | { state: 'output-error'; input: unknown; rawInput?: unknown; errorText: string; approval?: HistoryApproval<true> }
  | { state: 'approval-requested'; input: unknown; rawInput?: string; approval: { id: string } }
  | { state: 'approval-responded'; input: unknown; rawInput?: string; approval: HistoryApproval<boolean> }
  | { state: 'output-denied'; input: unknown; rawInput?: string; approval: HistoryApproval<false> }
);

/** A decided approval as `addToolApprovalResponse` leaves it on the part. */
export type HistoryApproval<Approved extends boolean> = { id: string; approved: Approved; reason?: string };

export interface HistoryUiMessage {
  id: string;
  role: 'user' | 'assistant';
  metadata?: TurnMetadata;
  parts: HistoryUiPart[];
}

/**
 * A conversation's path (its messages and turns without `supersededBy`) as the AI SDK's UI
 * messages, in the shape `/api/chat` streams them live: one
 * assistant message per turn with the turn id as its id (so resuming an active turn replaces its
 * message rather than adding a second), the turn's status as its `metadata`, and per step a
 * `step-start`, the reasoning a cancelled step had streamed, the text, the tool parts
 * (`providerExecuted` and `toolMetadata` as the live stream has them; a refused call as `output-error` without input; a call not settled yet as
 * `input-available`; a call awaiting a person as `approval-requested`, an approved one not settled
 * yet as `approval-responded`, a denied or expired one as `output-denied`) and the step's `data-tool-processing` part. A turn not started yet still
 * shows its user message (from its input) and an empty assistant message. A regenerate has no
 * user message of its own: its assistant message follows the user message it answers, in place
 * of the replaced answer. Messages and turns of another branch (`supersededBy`) are left out.
 * User messages have the id `<turnId>:user` (`/api/chat` takes that, or the id the client gave
 * the message, to name one to edit or regenerate). Imports nothing but types, so that a client
 * can use it as well. Pure.
 */
export function storedToUiMessages(history: StoredHistory): HistoryUiMessage[] {
  const messages = history.messages.filter((message) => message.supersededBy === undefined);
  const turns = history.turns.filter((turn) => turn.supersededBy == null);
  const turnAt = new Map(turns.map((turn, index) => [turn.id, index]));
  const startedTurns = new Set(messages.flatMap((message) => (message.turnId === null ? [] : [message.turnId])));
  const calls = new Map(history.toolCalls.map((call) => [callKey(call.turnId, call.toolCallId), call]));
  // A step's tool messages are written together when its tool phase completes.
  const completedCalls = new Set(
    messages.flatMap((message) => (message.role === 'tool' && message.turnId !== null && message.toolCallId ? [callKey(message.turnId, message.toolCallId)] : [])),
  );

  const ui: HistoryUiMessage[] = [];
  const assistants = new Map<string, HistoryUiMessage>();
  let nextTurn = 0;
  const openTurn = (turnId: string, userContent: unknown): HistoryUiMessage => {
    if (userContent != null) ui.push({ id: `${turnId}:user`, role: 'user', parts: userParts(userContent) });
    // A regenerate: the answer it replaced left its turn's assistant message empty.
    else if (ui.at(-1)?.role === 'assistant' && ui.at(-1)!.parts.length === 0) assistants.delete(ui.pop()!.id);
    const at = turnAt.get(turnId);
    const turn = at === undefined ? undefined : turns[at];
    const assistant: HistoryUiMessage = { id: turnId, role: 'assistant', ...(turn ? { metadata: { turnStatus: turn.status } } : {}), parts: [] };
    assistants.set(turnId, assistant);
    ui.push(assistant);
    return assistant;
  };
  /** Turns before `end` (in turn order) that stored no message yet: queued, or cancelled before they started. */
  const openUnstartedTurns = (end: number) => {
    for (; nextTurn < end; nextTurn++) {
      const turn = turns[nextTurn]!;
      if (!startedTurns.has(turn.id)) openTurn(turn.id, turn.input);
    }
  };

  messages.forEach((message, index) => {
    if (message.turnId === null) {
      if (message.role !== 'tool') ui.push({ id: `message-${index}`, role: message.role, parts: textParts(message.content) });
      return;
    }
    let assistant = assistants.get(message.turnId);
    if (!assistant) {
      const at = turnAt.get(message.turnId);
      if (at !== undefined) openUnstartedTurns(at + 1);
      assistant = openTurn(message.turnId, message.role === 'user' ? message.content : undefined);
    }
    if (message.role === 'assistant') assistant.parts.push(...stepParts(message, message.turnId, calls, completedCalls));
  });
  openUnstartedTurns(turns.length);
  return ui;
}

/** One stored assistant message (a step) as the live stream builds it. */
function stepParts(message: StoredMessage, turnId: string, calls: Map<string, StoredToolCall>, completedCalls: Set<string>): HistoryUiPart[] {
  const parts: HistoryUiPart[] = [{ type: 'step-start' }];
  // Only a cancelled step's reasoning is stored: it streamed before its text.
  if (message.reasoning) parts.push({ type: 'reasoning', text: message.reasoning, state: 'done' });
  const text = textOf(message.content);
  if (text) parts.push({ type: 'text', text, state: 'done' });
  const stepCalls: StoredToolCall[] = [];
  for (const requested of message.toolCalls ?? []) {
    const call = calls.get(callKey(turnId, requested.id));
    if (!call) continue;
    stepCalls.push(call);
    parts.push(toolPart(requested.function.name, call));
  }
  const step = stepCalls[0]?.step;
  if (step !== undefined) {
    const completed = stepCalls.every((call) => completedCalls.has(callKey(turnId, call.toolCallId)));
    const data: ToolProcessingData = completed
      ? { status: 'complete', step, results: stepCalls.length, failed: stepCalls.filter((call) => call.status !== 'succeeded').length }
      : { status: 'start', step };
    parts.push({ type: 'data-tool-processing', id: `${turnId}:${step}`, data });
  }
  return parts;
}

function toolPart(toolName: string, call: StoredToolCall): HistoryToolPart {
  const base = { type: `tool-${toolName}` as const, toolCallId: call.toolCallId, ...(call.runsOnClient ? {} : { providerExecuted: true as const }) };
  const decision = call.approval?.decision;
  // Live, a client call's input is made available only when the browser is asked to run it
  // (after its approval): until then the part keeps the streamed text of its arguments.
  const streamed = call.runsOnClient && call.argumentsText !== undefined ? { rawInput: call.argumentsText } : {};
  if (call.approval && call.status === 'awaiting_approval') return { ...base, state: 'approval-requested', input: call.args, ...streamed, approval: { id: call.approval.id } };
  if (call.approval && decision) {
    // As the person's answer left the part live: the decision, then the call's outcome.
    const reason = decision.reason !== null ? { reason: decision.reason } : {};
    if (!decision.approved) return { ...base, state: 'output-denied', input: call.args, ...streamed, approval: { id: call.approval.id, approved: false, ...reason } };
    const approval = { id: call.approval.id, approved: true as const, ...reason };
    const settled = settledToolPart(base, call);
    return settled.state === 'input-available' ? { ...base, state: 'approval-responded', input: call.args, approval } : { ...settled, approval };
  }
  return settledToolPart(base, call);
}

/** A call as it stands with no approval in the way: settled, or not yet (`input-available`). */
function settledToolPart(
  base: { type: `tool-${string}`; toolCallId: string; providerExecuted?: true },
  call: StoredToolCall,
): Extract<HistoryToolPart, { state: 'input-available' | 'output-available' | 'output-error' }> {
  const toolMetadata = { attempts: call.attempts, durationMs: call.durationMs };
  // Refused before it ran: live, `tool-input-error` left it without input.
  if (call.args === null && call.error) return { ...base, state: 'output-error', input: undefined, rawInput: null, errorText: describe(call.error), toolMetadata };
  if (call.status === 'succeeded') return { ...base, state: 'output-available', input: call.args, output: call.result ?? null, toolMetadata };
  if (call.status === 'failed' || call.status === 'cancelled') {
    return {
      ...base,
      state: 'output-error',
      input: call.args,
      errorText: describe(call.error ?? { code: 'outcome_unknown', message: 'the tool call ended without a result' }),
      toolMetadata,
    };
  }
  return { ...base, state: 'input-available', input: call.args };
}

/** A user message's content: text, or the content parts of `POST /v1/conversations/:id/turns` (text and images). */
function userParts(content: unknown): HistoryUiPart[] {
  if (!Array.isArray(content)) return textParts(content);
  return content.flatMap((part): HistoryUiPart[] => {
    if (part?.type === 'text' && typeof part.text === 'string') return [{ type: 'text', text: part.text }];
    const url: unknown = part?.image_url?.url;
    if (part?.type === 'image_url' && typeof url === 'string') return [{ type: 'file', mediaType: mediaTypeOf(url), url }];
    return [];
  });
}

function textParts(content: unknown): HistoryUiPart[] {
  const text = textOf(content);
  return text ? [{ type: 'text', text }] : [];
}

/** An image's media type: a data URL says it; any other URL is only known to be an image. */
function mediaTypeOf(url: string): string {
  return /^data:(image\/[\w.+-]+)[;,]/.exec(url)?.[1] ?? 'image/*';
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part && typeof part === 'object' && 'text' in part ? String(part.text) : '')).join('\n');
  return content == null ? '' : JSON.stringify(content);
}

function callKey(turnId: string, toolCallId: string): string {
  return `${turnId}\n${toolCallId}`;
}

function describe(error: { code: string; message: string }): string {
  return `${error.code}: ${error.message}`;
}

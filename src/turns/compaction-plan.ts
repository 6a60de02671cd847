import type { CompactionPolicy } from '@switchyard/protocol';
import type { ChatMessage, ContentPart } from '../providers/model-provider';
import type { StoredMessage } from '../store/messages-repository';
import { buildMessages, isChatMessagesInput } from './build-messages';

/**
 * What a step of a conversation with a compaction policy sends, and where a compaction cuts
 * (docs/API.md, "Long conversations"). Pure: the counting is given, the summary call and its
 * commit are compaction-step.ts's.
 */

/** `triggerFraction` when a policy gives neither it nor `triggerTokens`. */
export const DEFAULT_TRIGGER_FRACTION = 0.8;
/** `keepRecentTokens` when a policy does not say: a quarter of the trigger. */
const DEFAULT_KEEP_RECENT_SHARE = 0.25;

/** What the summary call is told when the policy gives no `instructions`. */
export const DEFAULT_COMPACTION_INSTRUCTIONS =
  'You compact a conversation. Summarise it for the assistant that will continue it: what the user wants, the facts, decisions, ' +
  'tool results and open questions it needs, in a few short paragraphs. Write only the summary.';

/**
 * The summary request's user message opens with this tag (and closes with its end tag): what a
 * model, or the scripted model, tells a compaction request by.
 */
export const SUMMARY_TRANSCRIPT_TAG = 'conversation-to-summarise';

export interface CompactionLimits {
  /** A step whose request counts more tokens than this compacts first. */
  triggerTokens: number;
  /** The tail kept as it is, in tokens (it grows to hold the last user message, and to start outside a tool exchange). */
  keepRecentTokens: number;
}

/** A policy's limits on a model of this window; an error message when it has neither a window nor `triggerTokens`. */
export function compactionLimits(policy: CompactionPolicy, contextWindow: number | undefined): { ok: true; limits: CompactionLimits } | { ok: false; message: string } {
  const triggerTokens = policy.triggerTokens ?? (contextWindow === undefined ? undefined : Math.floor(contextWindow * (policy.triggerFraction ?? DEFAULT_TRIGGER_FRACTION)));
  if (triggerTokens === undefined) return { ok: false, message: 'the model has no known contextWindow: a compaction policy on it needs triggerTokens' };
  return { ok: true, limits: { triggerTokens, keepRecentTokens: policy.keepRecentTokens ?? Math.floor(triggerTokens * DEFAULT_KEEP_RECENT_SHARE) } };
}

/**
 * How far the tokenizer's count is from the provider's: the provider's reported prompt tokens of
 * an earlier request over what the tokenizer counted for it. Bounded, so that one odd report
 * (a provider that counts nothing) does not make every request look empty or huge.
 */
export function countCorrection(last: { reported: number; counted: number } | null): number {
  if (!last || last.counted <= 0 || last.reported <= 0) return 1;
  return Math.min(4, Math.max(0.25, last.reported / last.counted));
}

/** The summary that stands in for the messages up to a message of the path. */
export interface ActiveSummary {
  summary: string;
  /** The row id of the last message it covers. */
  upToRowId: string;
}

/** The system message of a compacted conversation: its prompt, then the summary. */
export function systemWithSummary(system: string | null, summary: string | null): string | null {
  if (summary === null) return system;
  const block = `Summary of the conversation so far:\n${summary}`;
  return system ? `${system}\n\n${block}` : block;
}

/** The messages a step sends: the system prompt (with the summary), then the path after what the summary covers. */
export function requestMessages(system: string | null, summary: ActiveSummary | null, path: StoredMessage[]): ChatMessage[] {
  return buildMessages(systemWithSummary(system, summary?.summary ?? null), summary ? after(path, summary.upToRowId) : path);
}

/** The messages of `path` after the row `rowId`. */
export function after(path: StoredMessage[], rowId: string): StoredMessage[] {
  const bound = BigInt(rowId);
  return path.filter((message) => BigInt(rowIdOf(message)) > bound);
}

/** A stored message's row id, from its public id (`msg_<n>`). */
export function rowIdOf(message: Pick<StoredMessage, 'id'>): string {
  return message.id.replace(/^msg_/, '');
}

export interface PlanInput {
  system: string | null;
  summary: ActiveSummary | null;
  /** The conversation's path (every message on it, in order). */
  path: StoredMessage[];
  limits: CompactionLimits;
  /** The tokens of these messages (corrected toward the provider's count). */
  countTokens: (messages: ChatMessage[]) => number;
  /** What every request adds to its messages' tokens: its tools' definitions. */
  requestOverhead?: number;
  /** Compact whether or not the request passes the trigger (a provider said it is too long, or a caller asked). */
  force?: boolean;
}

export type CompactionPlan =
  /** The request fits: send it. */
  | { kind: 'send'; messages: ChatMessage[]; tokens: number }
  /** Summarise `span` (after the earlier summary, folded in) up to `upTo`, then send the tail after it. */
  | { kind: 'compact'; span: StoredMessage[]; upTo: StoredMessage; tail: StoredMessage[]; tokensBefore: number }
  /** Even the tail that must be kept does not fit under the trigger: no compaction helps. */
  | { kind: 'too-long'; tokens: number; tailTokens: number }
  /** Asked to compact, with nothing before the tail to summarise. */
  | { kind: 'nothing-to-compact'; messages: ChatMessage[]; tokens: number };

/**
 * Where the step stands: under the trigger it sends what it has; past it (or `force`) it cuts the
 * messages after the summary into a span to summarise and a tail to keep (see {@link tailStart}).
 */
export function planStep(input: PlanInput): CompactionPlan {
  const { system, summary, limits, countTokens } = input;
  const overhead = input.requestOverhead ?? 0;
  const messages = requestMessages(system, summary, input.path);
  const tokens = countTokens(messages) + overhead;
  if (!input.force && tokens <= limits.triggerTokens) return { kind: 'send', messages, tokens };
  const open = summary ? after(input.path, summary.upToRowId) : input.path;
  const start = tailStart(open, limits.keepRecentTokens, (message) => countTokens(buildMessages(null, [message])));
  const tail = open.slice(start);
  const tailTokens = countTokens(buildMessages(system, tail)) + overhead;
  if (tailTokens > limits.triggerTokens) return { kind: 'too-long', tokens, tailTokens };
  if (start === 0) return input.force ? { kind: 'nothing-to-compact', messages, tokens } : { kind: 'too-long', tokens, tailTokens };
  return { kind: 'compact', span: open.slice(0, start), upTo: open[start - 1]!, tail, tokensBefore: tokens };
}

/**
 * The index the kept tail starts at: the longest run of messages at the end within
 * `keepRecentTokens`, pulled back to hold the last user message, and never starting at a tool
 * message (so an assistant message with tool calls stays with its results). 0: everything.
 */
export function tailStart(messages: StoredMessage[], keepRecentTokens: number, messageTokens: (message: StoredMessage) => number): number {
  if (messages.length === 0) return 0;
  // No user message to keep (a turn's path always has one): the tail may start anywhere.
  let start = Math.max(messages.map((message) => message.role).lastIndexOf('user'), 0);
  while (start > 0 && messages[start]!.role === 'tool') start--;
  let kept = 0;
  for (let index = messages.length - 1; index >= start; index--) kept += messageTokens(messages[index]!);
  for (let index = start - 1; index >= 0; index--) {
    kept += messageTokens(messages[index]!);
    if (kept > keepRecentTokens) break;
    if (messages[index]!.role !== 'tool') start = index;
  }
  return start;
}

/**
 * The summary request: the instructions as its system message, and as its user message the
 * earlier summary (folded in) and the span written out as a transcript. A transcript, not the
 * messages themselves: the model summarises them rather than answering them, and a span may
 * hold what a provider would refuse as messages (a tool exchange cut short by a cancel).
 */
export function summaryRequest(instructions: string | undefined, previous: string | null, span: StoredMessage[]): ChatMessage[] {
  const body = [...(previous !== null ? [`[summary of what came before]\n${previous}`] : []), ...span.flatMap(transcriptLines)].join('\n\n');
  return [
    { role: 'system', content: instructions ?? DEFAULT_COMPACTION_INSTRUCTIONS },
    { role: 'user', content: `<${SUMMARY_TRANSCRIPT_TAG}>\n${body}\n</${SUMMARY_TRANSCRIPT_TAG}>` },
  ];
}

function transcriptLines(message: StoredMessage): string[] {
  switch (message.role) {
    case 'user':
      if (isChatMessagesInput(message.content)) return message.content.messages.map((each) => `[${each.role}] ${contentText(each.content)}`);
      return [`[user] ${contentText(message.content)}`];
    case 'assistant': {
      const calls = (message.toolCalls ?? []).map((call) => `[assistant called ${call.function.name}] ${call.function.arguments}`);
      return [...(message.content ? [`[assistant] ${contentText(message.content)}`] : []), ...calls];
    }
    case 'tool':
      return [`[tool result] ${contentText(message.content)}`];
  }
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return (content as ContentPart[]).map((part) => (part.type === 'text' ? part.text : '[image]')).join('\n');
  return content === null || content === undefined ? '' : JSON.stringify(content);
}

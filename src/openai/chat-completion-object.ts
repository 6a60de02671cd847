import type { UsageFigures } from '../usage/store/usage-ledger-repository';
import type { AssistantToolCall } from '../providers/model-provider';
import type { StoredMessage } from '../store/messages-repository';
import type { Turn } from '../store/turns-repository';
import { chatCompletionId } from './chat-completion-id';

/** A call Switchyard ran in the turn, as `switchyard.toolCalls` lists it. */
export interface ServerToolCall {
  toolCallId: string;
  toolName: string;
  args: unknown;
  result: unknown;
}

export interface ChatCompletionObject {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: [{ index: 0; message: { role: 'assistant'; content: string | null; refusal: null; tool_calls?: AssistantToolCall[] }; finish_reason: string; logprobs: null }];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; cost_usd: number };
  system_fingerprint: null;
  switchyard: { conversationId: string; turnId: string; toolCalls: ServerToolCall[] };
}

/** A turn's finish reason by the chat completion's names (Switchyard's own, like `max_steps`, as `stop`). */
export function chatFinishReason(finishReason: string, callerCalls: boolean): string {
  if (callerCalls) return 'tool_calls';
  return ['stop', 'length', 'content_filter'].includes(finishReason) ? finishReason : 'stop';
}

/**
 * An ended turn as a `chat.completion`, pure: the message of its last step (its text, and the
 * calls of the caller's functions that ended it), `usage` totals of all steps, and the calls
 * Switchyard ran on the way with their results.
 */
export function chatCompletionObject(input: { turn: Turn; messages: StoredMessage[]; model: string; created: number; usage: UsageFigures }): ChatCompletionObject {
  const { turn } = input;
  const own = input.messages.filter((message) => message.turnId === turn.id);
  const results = new Map(own.flatMap((message) => (message.role === 'tool' && message.toolCallId ? [[message.toolCallId, message.content] as const] : [])));
  const toolCalls: ServerToolCall[] = [];
  for (const message of own) {
    for (const call of message.toolCalls ?? []) {
      if (results.has(call.id))
        toolCalls.push({ toolCallId: call.id, toolName: call.function.name, args: parseArgs(call.function.arguments), result: parseResult(results.get(call.id)) });
    }
  }
  const last = own.findLast((message) => message.role === 'assistant');
  const callerCalls = turn.finishReason === 'tool_calls' ? (last?.toolCalls ?? []).filter((call) => !results.has(call.id)) : [];
  const content = typeof last?.content === 'string' && last.content !== '' ? last.content : null;
  return {
    id: chatCompletionId(turn.id),
    object: 'chat.completion',
    created: input.created,
    model: input.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          refusal: null,
          ...(callerCalls.length > 0 ? { tool_calls: callerCalls.map(({ id, type, function: fn }) => ({ id, type, function: fn })) } : {}),
        },
        finish_reason: chatFinishReason(turn.finishReason ?? 'stop', callerCalls.length > 0),
        logprobs: null,
      },
    ],
    // The ledger's sum for the turn: what the provider billed, discarded attempts included.
    usage: chatUsage(input.usage),
    system_fingerprint: null,
    switchyard: { conversationId: turn.conversationId, turnId: turn.id, toolCalls },
  };
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A tool message's content is the result as JSON text (tool-calls-repository.ts). */
function parseResult(content: unknown): unknown {
  return typeof content === 'string' ? parseArgs(content) : content;
}

/** The ledger's sum for a completion's turn in Chat Completions' spelling, its cost beside OpenAI's counts. */
export function chatUsage(usage: UsageFigures): ChatCompletionObject['usage'] {
  return { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.totalTokens, cost_usd: usage.costUsd };
}

import type { Usage } from '../events/event';
import type { ModelSettings } from './model-settings';

/** A message in the OpenAI chat format, which every supported provider speaks. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: AssistantToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export interface AssistantToolCall {
  id: string;
  type: 'function';
  /** `arguments` is the JSON text exactly as the model sent it. */
  function: { name: string; arguments: string };
}

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export interface CompletionRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  /** The turn's settings (temperature, max_tokens, …), sent as they are on every step. */
  settings?: ModelSettings;
  /** OpenAI's `response_format`: the turn's structured output. */
  responseFormat?: ProviderResponseFormat;
}

/** `response_format` as chat-completion requests carry it. */
export type ProviderResponseFormat =
  { type: 'json_object' } | { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown>; strict?: boolean; description?: string } };

/** A provider stream normalised to what the turn engine needs. */
export type ProviderChunk =
  | { type: 'text'; delta: string }
  | { type: 'reasoning'; delta: string }
  | { type: 'tool-call-fragment'; index: number; id?: string; name?: string; argumentsDelta?: string }
  /** `model` and `id`: what the provider says answered (`gen_ai.response.*` on traces), when it says. */
  | { type: 'finish'; finishReason: string; usage: Usage; model?: string; id?: string };

export interface ModelProvider {
  /**
   * Streams one completion. Ends with exactly one `finish` chunk, or throws a
   * {@link ProviderError} (a stream that ends without `finish_reason` throws `truncated`).
   */
  stream(request: CompletionRequest, signal: AbortSignal): AsyncIterable<ProviderChunk>;
  /**
   * Whether the provider answers and takes our key: one cheap request (its model list).
   * Resolves when it does; throws a {@link ProviderError} saying why not.
   */
  checkReachable(timeoutMs: number): Promise<void>;
}

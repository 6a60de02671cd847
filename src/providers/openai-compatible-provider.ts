import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import type { Usage } from '../events/event';
import type { CompletionRequest, ModelProvider, ProviderChunk } from './model-provider';
import { kindForStatus, parseRetryAfter, ProviderError } from './provider-error';
import { readProviderChunk } from './read-provider-chunk';

export interface OpenAiCompatibleOptions {
  baseURL: string;
  apiKey?: string;
  /** A stream with no chunk for this long is aborted (the SDK's timeout stops once headers arrive). */
  idleTimeoutMs: number;
}

/** The only place that talks to the `openai` SDK. */
export function createOpenAiCompatibleProvider(options: OpenAiCompatibleOptions): ModelProvider {
  // Retries are ours: the SDK would retry only before the first byte, and silently.
  const client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey || 'none', maxRetries: 0 });

  return {
    async *stream(request: CompletionRequest, signal: AbortSignal): AsyncIterable<ProviderChunk> {
      const controller = new AbortController();
      const abortFromCaller = () => controller.abort();
      // A signal that aborted already never fires: without this the request would still go out.
      if (signal.aborted) controller.abort();
      signal.addEventListener('abort', abortFromCaller, { once: true });
      let idleTimedOut = false;
      let idleTimer: NodeJS.Timeout | undefined;
      const armIdleTimer = () => {
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => {
          idleTimedOut = true;
          controller.abort();
        }, options.idleTimeoutMs);
      };

      try {
        armIdleTimer();
        const stream = await client.chat.completions.create(
          {
            model: request.model,
            messages: request.messages as OpenAI.Chat.ChatCompletionMessageParam[],
            stream: true,
            stream_options: { include_usage: true },
            ...(request.tools && request.tools.length > 0
              ? {
                  tools: request.tools.map((tool) => ({
                    type: 'function' as const,
                    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
                  })),
                  ...(request.toolChoice ? { tool_choice: request.toolChoice } : {}),
                }
              : {}),
          },
          { signal: controller.signal },
        );

        let finishReason: string | undefined;
        let usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
        for await (const raw of stream) {
          armIdleTimer();
          const chunk = readProviderChunk(raw);
          yield* chunk.output;
          finishReason = chunk.finishReason ?? finishReason;
          usage = chunk.usage ?? usage;
        }
        // A stream that ends without finish_reason was cut short, whatever the transport said.
        if (!finishReason) throw new ProviderError('truncated', 'the provider stream ended without a finish_reason');
        yield { type: 'finish', finishReason, usage };
      } catch (error) {
        throw toProviderError(error, { idleTimedOut, callerAborted: signal.aborted, idleTimeoutMs: options.idleTimeoutMs });
      } finally {
        clearTimeout(idleTimer);
        signal.removeEventListener('abort', abortFromCaller);
      }
    },
  };
}

/**
 * Classifies whatever ended a completion. Pure; exported for its tests. `context` tells what we
 * did ourselves: the caller aborted the completion, or our idle timer did.
 */
export function toProviderError(
  error: unknown,
  context: { idleTimedOut: boolean; callerAborted: boolean; idleTimeoutMs: number },
): ProviderError {
  // Checked first: the SDK ends a stream we aborted quietly, as if the provider had ended it,
  // so what reaches here is our own `truncated`, and a cancel would pass for a provider fault.
  if (context.callerAborted) return new ProviderError('aborted', 'the completion was aborted');
  if (context.idleTimedOut) return new ProviderError('idle_timeout', `no data from the provider for ${context.idleTimeoutMs} ms`);
  if (error instanceof ProviderError) return error;
  if (error instanceof APIUserAbortError) return new ProviderError('aborted', 'the completion was aborted');
  if (error instanceof APIConnectionError) return new ProviderError('connection', `connection to the provider failed: ${error.message}`);
  if (error instanceof APIError && typeof error.status === 'number') {
    const retryAfter = parseRetryAfter(error.headers?.get?.('retry-after'));
    return new ProviderError(kindForStatus(error.status), `provider answered ${error.status}: ${error.message}`, error.status, retryAfter);
  }
  if (error instanceof APIError) {
    // Status-less APIError: the SDK saw an `error` event inside a 200 stream.
    return new ProviderError('stream_error', `provider stream error: ${error.message}`);
  }
  const message = error instanceof Error ? error.message : String(error);
  // A socket cut mid-body surfaces as a bare TypeError('terminated') from undici.
  return new ProviderError('connection', `provider stream failed: ${message}`);
}

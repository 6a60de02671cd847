import type OpenAI from 'openai';
import { connectionFailureReason } from '../errors/connection-failure';
import { errorMessage } from '../errors/switchyard-error';
import type { Usage } from '../events/event';
import type { CompletionRequest, ModelProvider, ProviderChunk } from './model-provider';
import { failedRequestStatus, kindForStatus, parseRetryAfter, ProviderError, saysContextLengthExceeded, type ProviderRequestStatus } from './provider-error';
import { readProviderChunk } from './read-provider-chunk';
import { settingsFields } from './model-settings';
import { serverSentData } from './server-sent-data';
import { takeNodeBody, undiciRequestFetch } from './undici-request-fetch';
import type { LoopSlices } from './loop-slices';

export interface OpenAiCompatibleOptions {
  baseURL: string;
  apiKey?: string;
  /** A stream with no chunk for this long is aborted (the SDK's timeout stops once headers arrive). */
  idleTimeoutMs: number;
  /** Told what each completion request got back (for metrics). */
  onRequest?: (status: ProviderRequestStatus) => void;
  /** Shared by the process's streams: once a stream has output, its reads give way to other work in turn. */
  slices?: LoopSlices;
  /** Sent with every request (a models file's `headers`). */
  headers?: Record<string, string>;
}

/**
 * The SDK, loaded at a provider's first request: a process that never calls a provider (an API
 * on its own) does not load its 150 modules at start.
 */
let sdk: typeof import('openai') | undefined;
const openAiSdk = () => (sdk ??= require('openai') as typeof import('openai'));

/** The only place that talks to the `openai` SDK. */
export function createOpenAiCompatibleProvider(options: OpenAiCompatibleOptions): ModelProvider {
  let sdkClient: OpenAI | undefined;
  // Retries are ours: the SDK would retry only before the first byte, and silently.
  const client = () =>
    (sdkClient ??= new (openAiSdk().default)({
      baseURL: options.baseURL,
      apiKey: options.apiKey || 'none',
      maxRetries: 0,
      fetch: undiciRequestFetch,
      ...(options.headers ? { defaultHeaders: options.headers } : {}),
    }));

  return {
    async checkReachable(timeoutMs: number): Promise<void> {
      try {
        await client().models.list({ timeout: timeoutMs });
      } catch (error) {
        if (error instanceof openAiSdk().APIError && typeof error.status === 'number') {
          throw new ProviderError(kindForStatus(error.status), `answered ${error.status} to GET /models`, error.status);
        }
        // The SDK says only "Connection error."; the reason is further down its cause chain.
        throw new ProviderError('connection', connectionFailureReason(error));
      }
    },
    async *stream(request: CompletionRequest, signal: AbortSignal): AsyncIterable<ProviderChunk> {
      const controller = new AbortController();
      const abortFromCaller = () => controller.abort();
      // A signal that aborted already never fires: without this the request would still go out.
      if (signal.aborted) controller.abort();
      signal.addEventListener('abort', abortFromCaller, { once: true });
      let idleTimedOut = false;
      let answered = false;
      // Armed from the request on; `refresh()` restarts it at each chunk.
      const idleTimer = setTimeout(() => {
        idleTimedOut = true;
        controller.abort();
      }, options.idleTimeoutMs);

      try {
        // The SDK makes the request and throws its errors for an error status or a failed
        // connection; the body's events are read here, where a token costs a fraction of what
        // the SDK's stream parser spends on it.
        const response = await client()
          .chat.completions.create(
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
              ...settingsFields(request.settings, (request.tools?.length ?? 0) > 0),
              ...(request.responseFormat ? { response_format: request.responseFormat } : {}),
            },
            { signal: controller.signal },
          )
          .asResponse();
        // The SDK resolves once the answer's headers came with a 2xx; an error status throws.
        answered = true;
        options.onRequest?.('2xx');
        if (!response.body) throw new ProviderError('connection', 'provider stream failed: the answer had no body');

        let finishReason: string | undefined;
        let usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
        let respondedAs: { model?: string; id?: string } | undefined;
        // What follows `data: [DONE]` is read to the end of the body and ignored.
        let done = false;
        let outputYielded = false;
        for await (const batch of serverSentData(takeNodeBody(response) ?? response.body)) {
          // A step's first output goes at once (someone waits for that token); later reads give way.
          if (outputYielded) {
            const pause = options.slices?.yieldIfSpent();
            if (pause) await pause;
          }
          for (const data of batch) {
            if (done) continue;
            if (data.startsWith('[DONE]')) {
              done = true;
              continue;
            }
            idleTimer.refresh();
            // Invalid JSON throws its SyntaxError, a retryable `connection` failure as before.
            const raw: unknown = JSON.parse(data);
            // An event whose `error` is set fails the stream, as an APIError without a status: a
            // `stream_error`, with the provider's message.
            const error = (raw as { error?: unknown } | null)?.error;
            if (error) throw new (openAiSdk().APIError)(undefined, error, undefined, response.headers);
            const chunk = readProviderChunk(raw);
            // Read once: every chunk repeats them.
            respondedAs ??= respondent(raw as { model?: unknown; id?: unknown });
            if (chunk.output.length > 0) outputYielded = true;
            yield* chunk.output;
            finishReason = chunk.finishReason ?? finishReason;
            usage = chunk.usage ?? usage;
          }
        }
        // A stream that ends without finish_reason was cut short, whatever the transport said.
        if (!finishReason) throw new ProviderError('truncated', 'the provider stream ended without a finish_reason');
        yield { type: 'finish', finishReason, usage, ...respondedAs };
      } catch (error) {
        const providerError = toProviderError(error, { idleTimedOut, callerAborted: signal.aborted, idleTimeoutMs: options.idleTimeoutMs });
        if (!answered) options.onRequest?.(failedRequestStatus(providerError));
        throw providerError;
      } finally {
        clearTimeout(idleTimer);
        signal.removeEventListener('abort', abortFromCaller);
      }
    },
  };
}

/** The model and completion id a chunk names, for traces; a provider may leave them out. */
function respondent(raw: { model?: unknown; id?: unknown }): { model?: string; id?: string } {
  return {
    ...(typeof raw.model === 'string' && raw.model ? { model: raw.model } : {}),
    ...(typeof raw.id === 'string' && raw.id ? { id: raw.id } : {}),
  };
}

/**
 * Classifies whatever ended a completion. Pure; exported for its tests. `context` tells what we
 * did ourselves: the caller aborted the completion, or our idle timer did.
 */
export function toProviderError(error: unknown, context: { idleTimedOut: boolean; callerAborted: boolean; idleTimeoutMs: number }): ProviderError {
  // Checked first: an abort of ours reaches here as whatever the request or the body's read made
  // of it (the SDK's APIUserAbortError, an AbortError, a quiet end taken as `truncated`), and a
  // cancel or an idle timeout would pass for a provider fault.
  if (context.callerAborted) return new ProviderError('aborted', 'the completion was aborted');
  if (context.idleTimedOut) return new ProviderError('idle_timeout', `no data from the provider for ${context.idleTimeoutMs} ms`);
  if (ProviderError.isInstance(error)) return error;
  const { APIConnectionError, APIError, APIUserAbortError } = openAiSdk();
  if (error instanceof APIUserAbortError) return new ProviderError('aborted', 'the completion was aborted');
  if (error instanceof APIConnectionError) return new ProviderError('connection', `connection to the provider failed: ${error.message}`);
  if (error instanceof APIError && typeof error.status === 'number') {
    const retryAfter = parseRetryAfter(error.headers?.get?.('retry-after'));
    const kind = saysContextLengthExceeded(error.status, error.code, error.message) ? 'context_length_exceeded' : kindForStatus(error.status);
    return new ProviderError(kind, `provider answered ${error.status}: ${error.message}`, error.status, retryAfter);
  }
  if (error instanceof APIError) {
    // Status-less APIError: the SDK saw an `error` event inside a 200 stream.
    return new ProviderError('stream_error', `provider stream error: ${error.message}`);
  }
  const message = errorMessage(error);
  // A socket cut mid-body surfaces as a bare TypeError('terminated') from undici.
  return new ProviderError('connection', `provider stream failed: ${message}`);
}

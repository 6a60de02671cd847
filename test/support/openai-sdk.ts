import OpenAI from 'openai';

/**
 * OpenAI's own SDK pointed at a Switchyard's `/openai/v1`, as a user's code would be after
 * changing its base URL. No retries: a test sees each answer as the server gave it.
 */
export function openAiClient(baseUrl: string, apiKey: string, options: { maxRetries?: number } = {}): OpenAI {
  return new OpenAI({ baseURL: `${baseUrl}/openai/v1`, apiKey, maxRetries: options.maxRetries ?? 0 });
}

/** An OpenAI Batch API input line for `/v1/chat/completions`. */
export function batchLine(customId: string, body: Record<string, unknown>): string {
  return JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body });
}

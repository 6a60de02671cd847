import { z } from 'zod';
import { createChatCompletionSchema } from '../chat-completion-request';
import { documentOpenAiPaths, unixSeconds } from './openai-operation';

const toolCall = z.object({ id: z.string(), type: z.literal('function'), function: z.object({ name: z.string(), arguments: z.string() }) });
const chatCompletionSchema = z
  .object({
    id: z.string().meta({ description: '`chatcmpl-…`: its turn is `GET /v1/turns/chatcmpl-…`.' }),
    object: z.literal('chat.completion'),
    created: unixSeconds,
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({ role: z.literal('assistant'), content: z.string().nullable(), refusal: z.null(), tool_calls: z.array(toolCall).optional() }),
        finish_reason: z.string(),
        logprobs: z.null(),
      }),
    ),
    usage: z.object({
      prompt_tokens: z.number().int(),
      completion_tokens: z.number().int(),
      total_tokens: z.number().int(),
      cost_usd: z.number().meta({ description: "Switchyard's: the usage ledger's cost of the completion's turn (priced calls only)." }),
    }),
    switchyard: z.object({ conversationId: z.string(), turnId: z.string(), toolCalls: z.array(z.unknown()) }),
  })
  .meta({ id: 'OpenAiChatCompletion' });

export const openAiChatCompletionPaths = documentOpenAiPaths({
  '/openai/v1/chat/completions': {
    post: {
      operationId: 'openAiCreateChatCompletion',
      summary: "Create a chat completion (OpenAI's Chat Completions API), streamed or not",
      description:
        'Runs as a turn of a new conversation with the messages given whole. Settings go to the provider on every step; what Switchyard cannot honour (`n` > 1, `logprobs`, audio) is a 400 `unsupported_parameter` naming `param`.',
      jsonBody: createChatCompletionSchema,
      responses: {
        '200': {
          description:
            'The `chat.completion` once the turn has ended; with `stream: true`, `chat.completion.chunk`s as server-sent `data:` lines, a usage chunk with `stream_options.include_usage`, then `data: [DONE]`.',
          content: { 'application/json': { schema: chatCompletionSchema }, 'text/event-stream': { schema: { type: 'string' } } },
        },
      },
      errors: [404, 409],
    },
  },
});

import { z } from 'zod';
import { toolNameSchema, turnContentSchema } from '@switchyard/protocol';

// A turn's answer shows its toolChoice back, and the client posts content: the schemas are the protocol's.
export { toolChoiceSchema, toolNameSchema, turnContentSchema } from '@switchyard/protocol';

const chatMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), content: turnContentSchema }).strict(),
  z
    .object({
      role: z.literal('assistant'),
      content: z.string().max(500_000).nullable(),
      tool_calls: z
        .array(
          z
            .object({ id: z.string().min(1).max(200), type: z.literal('function'), function: z.object({ name: toolNameSchema, arguments: z.string().max(500_000) }).strict() })
            .strict(),
        )
        .max(128)
        .optional(),
    })
    .strict(),
  z.object({ role: z.literal('tool'), tool_call_id: z.string().min(1).max(200), content: z.string().max(500_000) }).strict(),
]);

/**
 * A turn's input given as chat messages rather than one user message (the OpenAI-compatible
 * routes: earlier messages of a request, and the caller's answers to its own function calls):
 * sent to the model as they are, in place of the turn's user message.
 */
export const chatMessagesInputSchema = z.object({ type: z.literal('chat_messages'), messages: z.array(chatMessageSchema).min(1).max(1000) }).strict();
export type ChatMessagesInput = z.infer<typeof chatMessagesInputSchema>;

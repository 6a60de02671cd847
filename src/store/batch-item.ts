import { z } from 'zod';
import { toolChoiceSchema, toolNameSchema, turnContentSchema, type ChatMessagesInput } from '../events/turn-content';
import type { ToolDefinition } from '../providers/model-provider';
import { modelSettingsSchema } from '../providers/model-settings';
import { responseFormatSchema } from '../providers/response-format';

// A batch item as it is submitted and stored: the batch submission checks it, the batches
// repository keeps it, and the batch runner makes turns of it.

const message = z.union([turnContentSchema, z.object({ role: z.enum(['user', 'assistant']), content: turnContentSchema }).strict()]);
const itemFields = {
  customId: z.string().min(1).max(200),
  messages: z.array(message).min(1).max(100),
  system: z.string().max(200_000),
  model: z.string().min(1).max(200),
  tools: z.array(toolNameSchema).max(128),
  /** Tool names whose calls wait for the batch owner's approval. */
  requireApproval: z.array(toolNameSchema).max(128),
  toolChoice: toolChoiceSchema,
  maxSteps: z.number().int().min(1).max(100),
  modelSettings: modelSettingsSchema,
  responseFormat: responseFormatSchema,
  metadata: z.record(z.string(), z.unknown()),
};
export const partialItemSchema = z.object(itemFields).partial().strict();
export const itemSchema = z
  .object({ ...itemFields, messages: itemFields.messages.optional() })
  .partial()
  .strict();

/**
 * A message of an item: as submitted, or (an item made of an OpenAI Batch API line) one user turn
 * whose input is chat messages (earlier messages, tool answers).
 */
export type BatchMessage = z.infer<typeof message> | { role: 'user'; content: ChatMessagesInput };
/**
 * One item as stored: defaults applied, at least one user message. `functions`: the caller's own
 * functions of an OpenAI line (TurnOptions.functions).
 */
export type BatchItemSpec = Omit<z.infer<typeof partialItemSchema>, 'customId' | 'messages'> & {
  messages: BatchMessage[];
  functions?: ToolDefinition[];
  /** The agent of `defaults.agent`, as checked at submission: `agent_…` or `agent_…@N`. */
  agent?: string;
};

export interface BatchItem {
  /** 1-based position in the JSON `items`, or line in the JSONL body. */
  line: number;
  customId?: string;
  spec: BatchItemSpec;
}

export interface BatchOptions {
  concurrency: number;
  priority: number;
  metadata?: Record<string, unknown>;
  skipInvalid: boolean;
}

export type BatchDefaults = Omit<z.infer<typeof partialItemSchema>, 'customId'> & { agent?: string };

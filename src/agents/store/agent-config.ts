import { z } from 'zod';
import { toolChoiceSchema, toolNameSchema } from '../../events/turn-content';
import { modelSettingsSchema } from '../../providers/model-settings';
import { responseFormatSchema } from '../../providers/response-format';
import { compactionPolicySchema } from '@switchyard/protocol';

/** `^[A-Za-z0-9_.-]{1,100}$`, not starting with `agent_`: a name never reads as an id, and `@` ends it in a reference. */
export const agentNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,100}$/, 'letters, digits, _, . or -, at most 100')
  .refine((name) => !name.startsWith('agent_'), 'a name may not start with agent_ (that is how ids start)');

/** What one version of an agent holds (docs/API.md, "Agents"): every field but `name` optional. */
export const agentConfigSchema = z
  .object({
    name: agentNameSchema,
    instructions: z.string().max(200_000).optional().meta({ description: "The system prompt of the agent's conversations." }),
    model: z.string().min(1).max(200).optional(),
    tools: z.array(toolNameSchema).max(128).optional().meta({ description: 'The tools its turns offer (`[]`: none).' }),
    toolChoice: z.optional(toolChoiceSchema),
    requireApproval: z.array(toolNameSchema).max(128).optional(),
    maxSteps: z.number().int().min(1).max(100).optional(),
    modelSettings: z.optional(modelSettingsSchema),
    responseFormat: z.optional(responseFormatSchema),
    compaction: z.optional(compactionPolicySchema),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type AgentConfig = z.infer<typeof agentConfigSchema>;

/**
 * `PATCH /v1/agents/:id`: the fields to change; `null` removes one (the next version goes back to
 * the default for it). What it leaves out is kept from the latest version.
 */
export const agentPatchSchema = z
  .object({
    name: agentNameSchema.optional(),
    instructions: z.string().max(200_000).nullable().optional(),
    model: z.string().min(1).max(200).nullable().optional(),
    tools: z.array(toolNameSchema).max(128).nullable().optional(),
    toolChoice: z.optional(z.nullable(toolChoiceSchema)),
    requireApproval: z.array(toolNameSchema).max(128).nullable().optional(),
    maxSteps: z.number().int().min(1).max(100).nullable().optional(),
    modelSettings: z.optional(z.nullable(modelSettingsSchema)),
    responseFormat: z.optional(z.nullable(responseFormatSchema)),
    compaction: z.optional(z.nullable(compactionPolicySchema)),
    metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  })
  .strict();
export type AgentPatch = z.infer<typeof agentPatchSchema>;

/** The next version's configuration: the latest with the patch laid over it. Pure. */
export function patchedConfig(latest: AgentConfig, patch: AgentPatch): AgentConfig {
  const next: Record<string, unknown> = { ...latest };
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete next[field];
    else next[field] = value;
  }
  return next as AgentConfig;
}

import type { AgentConfig } from '../agents/store/agent-config';
import type { BegunAttempt, TurnOptions } from '../store/turns-repository';

/** What a turn runs with once its agent's version is laid under its own fields and its conversation's. */
export interface TurnSettings {
  options: TurnOptions;
  conversation: BegunAttempt['conversation'];
}

/**
 * The turn's own fields win, then its conversation's, then its agent's version (docs/API.md,
 * "Agents": a conversation with an agent takes its settings from it; a turn's own fields win for
 * that turn). The agent's `instructions` is the system prompt; its `modelSettings`,
 * `responseFormat` and `compaction` stand where the conversation has none, so that a turn's
 * own settings are still laid over them field by field. Pure.
 */
export function turnSettings(options: TurnOptions, conversation: BegunAttempt['conversation'], agent: AgentConfig | null): TurnSettings {
  if (!agent) return { options, conversation };
  return {
    conversation: {
      system: conversation.system ?? agent.instructions ?? null,
      model: conversation.model ?? agent.model ?? null,
      tools: conversation.tools ?? agent.tools ?? null,
      requireApproval: conversation.requireApproval ?? agent.requireApproval ?? null,
      modelSettings: conversation.modelSettings ?? agent.modelSettings ?? null,
      responseFormat: conversation.responseFormat ?? agent.responseFormat ?? null,
      compaction: conversation.compaction ?? agent.compaction ?? null,
    },
    options: {
      ...pick(agent, ['toolChoice', 'maxSteps']),
      ...options,
    },
  };
}

function pick<T extends object, K extends keyof T>(value: T, keys: K[]): Partial<Pick<T, K>> {
  const picked: Partial<Pick<T, K>> = {};
  for (const key of keys) if (value[key] !== undefined) picked[key] = value[key];
  return picked;
}

import type { ModelSettings } from '@switchyard/protocol';

// The schema is the protocol's: the routes validate with it and the client posts its type.
export { modelSettingsSchema, type ModelSettings } from '@switchyard/protocol';

/**
 * The settings as a chat-completion request's fields, pure. `parallel_tool_calls` goes only
 * with tools: OpenAI refuses it on a request that offers none.
 */
export function settingsFields(settings: ModelSettings | undefined, hasTools: boolean): Record<string, unknown> {
  if (!settings) return {};
  const { parallel_tool_calls: parallel, ...rest } = settings;
  return { ...rest, ...(parallel !== undefined && hasTools ? { parallel_tool_calls: parallel } : {}) };
}

import type { Attributes } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';

/**
 * Names from the OpenTelemetry GenAI semantic conventions (v1.37 and later: `gen_ai.provider.name`
 * replaced `gen_ai.system`). They are at Development status, so they are copied here rather than
 * imported from the package's `incubating` entry point, as OpenTelemetry advises: a minor release
 * cannot rename what dashboards read. Message contents, arguments and results (the conventions'
 * opt-in attributes) are never recorded.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
} as const;

/** Switchyard's own attributes, for what the conventions have no name for. */
export const SWITCHYARD = {
  turnId: 'switchyard.turn.id',
  turnAttempt: 'switchyard.turn.attempt',
  turnOutcome: 'switchyard.turn.outcome',
  /** `created`, or `replayed` (an idempotency key named an earlier turn). */
  admission: 'switchyard.turn.admission',
  step: 'switchyard.step',
  jobName: 'switchyard.job.name',
  /** True on a run of a turn its own process admitted and started at once (turns/local-turn-slots.ts). */
  handedOff: 'switchyard.turn.handed_off',
  toolKind: 'switchyard.tool.kind',
  toolAttempts: 'switchyard.tool.attempts',
  toolOutcome: 'switchyard.tool.outcome',
  /** `approved`, `denied` or `timeout`. */
  approvalOutcome: 'switchyard.tool.approval.outcome',
  /** The models file's provider a chat request went to (`default` for LLM_*). */
  provider: 'switchyard.provider',
  /** The Switchyard model the turn asked for; `gen_ai.request.model` is the name at the provider. */
  model: 'switchyard.model',
  /** The request is the one probe of a target whose cooldown ended. */
  probe: 'switchyard.provider.probe',
} as const;

/**
 * Every provider is spoken to through OpenAI's chat completions API and SDK; the conventions ask
 * for the instrumentation's best knowledge, and `server.address` names the host really used.
 */
const PROVIDER_NAME = 'openai';

/** Span names: `{operation} {target}` for the GenAI spans, as the conventions ask. */
export const spanNames = {
  admitTurn: 'admit turn',
  runTurn: 'run turn',
  chat: (model: string) => `chat ${model}`,
  executeTool: (toolName?: string) => (toolName ? `execute_tool ${toolName}` : 'execute_tool'),
  decideApproval: (toolName: string) => `decide_approval ${toolName}`,
};

/** What a chat span knows when the request goes out. */
export function chatRequestAttributes(input: {
  model: string;
  conversationId: string;
  turnId: string;
  step: number;
  providerUrl?: string;
  provider?: string;
  routedModel?: string;
  probe?: boolean;
}): Attributes {
  return {
    ...(input.provider ? { [SWITCHYARD.provider]: input.provider } : {}),
    ...(input.routedModel ? { [SWITCHYARD.model]: input.routedModel } : {}),
    ...(input.probe ? { [SWITCHYARD.probe]: true } : {}),
    [GEN_AI.operationName]: 'chat',
    [GEN_AI.providerName]: PROVIDER_NAME,
    [GEN_AI.requestModel]: input.model,
    [GEN_AI.conversationId]: input.conversationId,
    [SWITCHYARD.turnId]: input.turnId,
    [SWITCHYARD.step]: input.step,
    ...serverAttributes(input.providerUrl),
  };
}

/** What a chat span learns at the end of a completed stream. */
export function chatResponseAttributes(output: {
  finishReason: string;
  usage: { promptTokens: number; completionTokens: number };
  responseModel?: string;
  responseId?: string;
}): Attributes {
  return {
    [GEN_AI.finishReasons]: [output.finishReason],
    [GEN_AI.inputTokens]: output.usage.promptTokens,
    [GEN_AI.outputTokens]: output.usage.completionTokens,
    ...(output.responseModel ? { [GEN_AI.responseModel]: output.responseModel } : {}),
    ...(output.responseId ? { [GEN_AI.responseId]: output.responseId } : {}),
  };
}

/** An execute_tool span's call, once the call is read (its job carries ids only). */
export function toolCallAttributes(input: { toolName: string; toolCallId?: string; kind?: string; attempts: number }): Attributes {
  return {
    [GEN_AI.toolName]: input.toolName,
    ...(input.toolCallId ? { [GEN_AI.toolCallId]: input.toolCallId } : {}),
    // Every tool Switchyard runs is offered to the model as a function.
    [GEN_AI.toolType]: 'function',
    [SWITCHYARD.toolAttempts]: input.attempts,
    ...(input.kind ? { [SWITCHYARD.toolKind]: input.kind } : {}),
  };
}

/** `error.type`: a low-cardinality code (a provider error kind, a tool error code). */
export function errorAttributes(errorType: string): Attributes {
  return { [ATTR_ERROR_TYPE]: errorType };
}

/** Host and port only: a base URL may carry credentials or a path with tenant ids. */
function serverAttributes(url: string | undefined): Attributes {
  if (!url) return {};
  try {
    const parsed = new URL(url);
    const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
    return { [ATTR_SERVER_ADDRESS]: parsed.hostname, [ATTR_SERVER_PORT]: port };
  } catch {
    return {};
  }
}

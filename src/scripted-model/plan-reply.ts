import type { ChatRequest, ToolDefinition } from './chat-request-schema';
import { errorTypeForStatus, invalidRequest, type OpenAiError } from './openai-error';
import { sampleArguments } from './sample-arguments';
import type { ErrorSpec, Step } from './scenario-schema';
import { fragmentToolCalls, type PlannedCall, type ToolCallFragment } from './tool-call-fragments';
import { fillerTokens, tokenize } from './tokenize';

export type Delta = { content: string } | { reasoning_content: string } | { tool_calls: ToolCallFragment[] };

export interface PlannedChunk {
  /** Pause before sending this chunk. */
  delayMs: number;
  /** Text or reasoning tokens in it, or 1 for a tool-call fragment. */
  tokens: number;
  delta: Delta;
}

export type Ending = { kind: 'finish'; finishReason: string | null } | { kind: 'cut' } | { kind: 'stall' } | { kind: 'error-event'; message: string };

export interface CompletionPlan {
  /**
   * What is streamed after the role chunk, in order (already cut short for cut, stall and error
   * endings). Made lazily on each iteration, so a huge answer never sits in memory whole.
   */
  chunks: Iterable<PlannedChunk>;
  ending: Ending;
  /** The calls whole, for the non-streaming answer. */
  calls: PlannedCall[];
  omitIds: boolean;
}

export type Reply = { kind: 'error'; error: OpenAiError } | { kind: 'completion'; plan: CompletionPlan };

type Unit = { field: 'reasoning_content' | 'content'; text: string } | { field: 'tool_calls'; fragment: ToolCallFragment };

/** Turns a step into what the server sends: an error, or the chunks of a completion and how it ends. Pure. */
export function planReply(step: Step, request: ChatRequest): Reply {
  if (step.error) return { kind: 'error', error: errorFromSpec(step.error) };
  const calls = planCalls(step, request);
  if (!Array.isArray(calls)) return { kind: 'error', error: calls };

  const chunks = { [Symbol.iterator]: () => toChunks(unitsOf(step, calls), step) };
  return { kind: 'completion', plan: { chunks, ending: endingOf(step, calls), calls, omitIds: step.omitIds ?? false } };
}

/** The tools a model may call: `tools`, narrowed by `tool_choice` (`none`: none; a named function: that one). */
export function callableTools(request: ChatRequest): ToolDefinition[] {
  const tools = request.tools ?? [];
  const choice = request.tool_choice;
  if (choice === 'none') return [];
  return typeof choice === 'object' && choice ? tools.filter((tool) => tool.function.name === choice.function.name) : tools;
}

function planCalls(step: Step, request: ChatRequest): PlannedCall[] | OpenAiError {
  if (step.toolCalls === undefined) return [];
  if (step.toolCalls === 'offered') {
    const tools = callableTools(request);
    if (tools.length === 0) {
      const message = 'The scripted scenario asks for toolCalls "offered", but the request offers no tools to call.';
      return invalidRequest(message, 'tools', 'invalid_scenario');
    }
    return tools.slice(0, step.maxOfferedCalls ?? 3).map((tool, i) => ({
      id: `call_${i}`,
      name: tool.function.name,
      arguments: JSON.stringify(sampleArguments(tool.function.parameters ?? { type: 'object' })),
    }));
  }
  return step.toolCalls.map((call, i) => ({
    id: call.id ?? `call_${i}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
  }));
}

/** Reasoning tokens, text tokens, then call fragments, stopping at the step's `…AfterTokens` limit. */
function* unitsOf(step: Step, calls: readonly PlannedCall[]): Generator<Unit> {
  const limit = step.cutAfterTokens ?? step.stallAfterTokens ?? step.errorEventAfterTokens ?? Infinity;
  let count = 0;
  for (const unit of allUnitsOf(step, calls)) {
    if (count++ >= limit) return;
    yield unit;
  }
}

function* allUnitsOf(step: Step, calls: readonly PlannedCall[]): Generator<Unit> {
  for (const token of tokenize(step.reasoning ?? '')) yield { field: 'reasoning_content', text: token };
  const text = step.text !== undefined ? tokenize(step.text) : fillerTokens(step.tokens ?? 0);
  for (const token of text) yield { field: 'content', text: token };
  for (const fragment of fragmentToolCalls(calls, step)) yield { field: 'tool_calls', fragment };
}

/** Groups text and reasoning tokens `chunkTokens` to a chunk (fragments go one per chunk) and times them. */
function* toChunks(units: Iterable<Unit>, step: Step): Generator<PlannedChunk> {
  const perChunk = step.chunkTokens ?? 1;
  let group: Unit[] = [];
  let first = true;
  const chunkOf = (): PlannedChunk => ({
    delayMs: first ? (step.firstTokenDelayMs ?? 0) : (step.tokenDelayMs ?? 0) * group.length,
    tokens: group.length,
    delta: deltaOf(group),
  });
  for (const unit of units) {
    const joins = unit.field !== 'tool_calls' && group[0]?.field === unit.field && group.length < perChunk;
    if (group.length > 0 && !joins) {
      yield chunkOf();
      first = false;
      group = [];
    }
    group.push(unit);
  }
  if (group.length > 0) yield chunkOf();
}

function deltaOf(group: readonly Unit[]): Delta {
  const first = group[0]!;
  if (first.field === 'tool_calls') return { tool_calls: [first.fragment] };
  const text = group.map((unit) => ('text' in unit ? unit.text : '')).join('');
  return first.field === 'content' ? { content: text } : { reasoning_content: text };
}

function endingOf(step: Step, calls: readonly PlannedCall[]): Ending {
  if (step.cutAfterTokens !== undefined) return { kind: 'cut' };
  if (step.stallAfterTokens !== undefined) return { kind: 'stall' };
  if (step.errorEventAfterTokens !== undefined) {
    return { kind: 'error-event', message: `The scripted model failed after ${step.errorEventAfterTokens} tokens, as its scenario asked.` };
  }
  if (step.omitFinishReason) return { kind: 'finish', finishReason: null };
  return { kind: 'finish', finishReason: step.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop') };
}

function errorFromSpec(spec: ErrorSpec): OpenAiError {
  return {
    status: spec.status,
    message: spec.message ?? `The scripted model answers ${spec.status}, as its scenario asked.`,
    type: spec.type ?? errorTypeForStatus(spec.status),
    param: null,
    code: spec.code ?? null,
    retryAfterSeconds: spec.retryAfterSeconds,
  };
}

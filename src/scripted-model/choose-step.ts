import type { ChatMessage, ChatRequest } from './chat-request-schema';
import { defaultStep } from './default-step';
import { findScenario } from './find-scenario';
import { summaryStep } from './summary-step';
import type { OpenAiError } from './openai-error';
import type { Scenario, Step, StepEntry } from './scenario-schema';
import { structuredAnswer } from './structured-answer';

export interface ChooseStepInput {
  request: ChatRequest;
  /** The `x-scripted-scenario` header, if sent. */
  scenarioHeader: string | undefined;
  /** How often these messages arrived before (0 the first time); asked only for an `attempts` step. */
  countArrival: (messages: readonly ChatMessage[]) => number;
  /** Pause per token of answers made without a scenario. */
  defaultTokenDelayMs: number;
}

export type StepChoice = { ok: true; step: Step } | { ok: false; error: OpenAiError };

/**
 * The step that answers a request: a compaction request's summary (its transcript quotes the
 * scenarios of the messages it summarises, which are not for it), else the scenario's current
 * step (or attempt), else the default behaviour.
 */
export function chooseStep(input: ChooseStepInput): StepChoice {
  const { request } = input;
  const summary = summaryStep(request.messages);
  if (summary) return { ok: true, step: summary };
  const lookup = findScenario(input.scenarioHeader, request.messages, { beforeRepair: isStructured(request) });
  if (lookup.kind === 'invalid') return { ok: false, error: lookup.error };
  if (lookup.kind === 'none') return { ok: true, step: defaultStep(request, input.defaultTokenDelayMs) };

  const entry = selectStep(lookup.scenario, request.messages, lookup.anchorIndex);
  // A scripted test past its last step wants the default answer, not a human-paced one.
  if (!entry) return { ok: true, step: defaultStep(request, 0) };
  if (!('attempts' in entry)) return { ok: true, step: withStructuredText(entry, request) };
  const arrival = input.countArrival(request.messages);
  return { ok: true, step: withStructuredText(entry.attempts[Math.min(arrival, entry.attempts.length - 1)]!, request) };
}

function isStructured(request: ChatRequest): boolean {
  return request.response_format != null && request.response_format.type !== 'text';
}

/** A scripted step that says nothing of its answer answers a structured-output request with JSON (fitting unless `invalidOutput`). */
function withStructuredText(step: Step, request: ChatRequest): Step {
  if (step.text !== undefined || step.tokens !== undefined || step.toolCalls !== undefined || step.error !== undefined) return step;
  const text = structuredAnswer(request, step.invalidOutput === true);
  return text === undefined ? step : { ...step, text };
}

/** `steps[n]`, n being the assistant messages after the scenario's user message; undefined past the last step. */
export function selectStep(scenario: Scenario, messages: readonly ChatMessage[], anchorIndex: number): StepEntry | undefined {
  const answered = messages.slice(anchorIndex + 1).filter((message) => message.role === 'assistant').length;
  return scenario.steps[answered];
}

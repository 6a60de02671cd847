import type { ChatMessage, ChatRequest } from './chat-request-schema';
import { defaultStep } from './default-step';
import { findScenario } from './find-scenario';
import { summaryStep } from './summary-step';
import type { OpenAiError } from './openai-error';
import type { Scenario, Step, StepEntry } from './scenario-schema';

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
  const lookup = findScenario(input.scenarioHeader, request.messages);
  if (lookup.kind === 'invalid') return { ok: false, error: lookup.error };
  if (lookup.kind === 'none') return { ok: true, step: defaultStep(request, input.defaultTokenDelayMs) };

  const entry = selectStep(lookup.scenario, request.messages, lookup.anchorIndex);
  // A scripted test past its last step wants the default answer, not a human-paced one.
  if (!entry) return { ok: true, step: defaultStep(request, 0) };
  if (!('attempts' in entry)) return { ok: true, step: entry };
  const arrival = input.countArrival(request.messages);
  return { ok: true, step: entry.attempts[Math.min(arrival, entry.attempts.length - 1)]! };
}

/** `steps[n]`, n being the assistant messages after the scenario's user message; undefined past the last step. */
export function selectStep(scenario: Scenario, messages: readonly ChatMessage[], anchorIndex: number): StepEntry | undefined {
  const answered = messages.slice(anchorIndex + 1).filter((message) => message.role === 'assistant').length;
  return scenario.steps[answered];
}

import { errorMessage } from '../errors/switchyard-error';
import type { ChatMessage } from './chat-request-schema';
import { messageText } from './message-text';
import { invalidRequest, type OpenAiError } from './openai-error';
import { parseScenario, type Scenario } from './scenario-schema';

export const SCENARIO_HEADER = 'x-scripted-scenario';

const MARKER = /\[\[scripted\s/;

export type ScenarioLookup =
  | { kind: 'none' }
  /** `anchorIndex`: the user message whose answer is `steps[0]` (-1 when there is no user message). */
  | { kind: 'found'; scenario: Scenario; anchorIndex: number }
  | { kind: 'invalid'; error: OpenAiError };

/**
 * Finds the scenario of a request: the `x-scripted-scenario` header, else the last user
 * message's `[[scripted <json>]]`, if it has one (`beforeRepair`: or, when the last user message
 * follows an assistant answer and has none, the user message before). A scenario that is there but broken is an error
 * rather than "no scenario", so that a typo fails the test that made it.
 */
export function findScenario(header: string | undefined, messages: readonly ChatMessage[], options: { beforeRepair?: boolean } = {}): ScenarioLookup {
  const roles = messages.map((message) => message.role);
  const lastUser = roles.lastIndexOf('user');
  if (header !== undefined) return fromJson(header, lastUser, `the ${SCENARIO_HEADER} header`, SCENARIO_HEADER);

  // Only the newest user message: a plain "hello" after a scripted one is a chat of its own, not
  // the earlier scenario again (the scripted model's guide says so). Structured output's repair
  // request is the exception: Switchyard's own user message after the rejected answer, answered
  // by the scenario's next step.
  const found = scenarioAt(messages, lastUser);
  if (found.kind !== 'none' || !options.beforeRepair || roles[lastUser - 1] !== 'assistant') return found;
  return scenarioAt(messages, roles.lastIndexOf('user', lastUser - 1));
}

function scenarioAt(messages: readonly ChatMessage[], lastUser: number): ScenarioLookup {
  const message = messages[lastUser];
  if (message === undefined) return { kind: 'none' };
  const text = messageText(message);
  const marker = MARKER.exec(text);
  if (!marker) return { kind: 'none' };
  const start = marker.index + marker[0].length;
  const end = text.lastIndexOf(']]');
  const where = `messages[${lastUser}]`;
  if (end < start) return invalid(`The [[scripted …]] in ${where} has no closing "]]".`, `${where}.content`);
  return fromJson(text.slice(start, end), lastUser, where, `${where}.content`);
}

function fromJson(json: string, anchorIndex: number, where: string, param: string): ScenarioLookup {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return invalid(`The scripted scenario in ${where} is not valid JSON: ${errorMessage(error)}`, param);
  }
  const parsed = parseScenario(value);
  if (!parsed.ok) return invalid(`The scripted scenario in ${where} is invalid: ${parsed.message}`, param);
  return { kind: 'found', scenario: parsed.scenario, anchorIndex };
}

function invalid(message: string, param: string): ScenarioLookup {
  return { kind: 'invalid', error: invalidRequest(message, param, 'invalid_scenario') };
}

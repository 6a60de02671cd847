/**
 * Scripted-model scenarios (see src/scripted-model/scenario-schema.ts). Switchyard passes the
 * user's message on to the model, so a turn carries its scenario in its content; a direct SDK
 * call carries the same scenario in the `x-scripted-scenario` header.
 */
export type Scenario = Record<string, unknown>;

export const SCENARIO_HEADER = 'x-scripted-scenario';

/** The content of a turn that makes the scripted model answer with `scenario`. */
export function scriptedContent(scenario: Scenario, prompt = 'bench'): string {
  return `${prompt} [[scripted ${JSON.stringify(scenario)}]]`;
}

/** N filler tokens at full speed (no pauses). */
export const fillerTokens = (tokens: number): Scenario => ({ tokens });

/** A step that calls `calculator` `count` times in parallel, then answers "ok". */
export function parallelCalculatorCalls(count: number): Scenario {
  const toolCalls = Array.from({ length: count }, (_unused, index) => ({
    name: 'calculator',
    arguments: { expression: `${index} + 1` },
  }));
  return { steps: [{ toolCalls }, { text: 'ok' }] };
}

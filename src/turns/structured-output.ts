import type { ChatMessage } from '../providers/model-provider';
import type { ResponseFormat } from '../providers/response-format';
import { compileJsonSchema } from '../tools/json-schema-compiler';
import { describeValidationErrors } from '../tools/validation-messages';
import { errorMessage } from '../errors/switchyard-error';

export type OutputCheck = { ok: true; value: unknown } | { ok: false; problem: string };

/**
 * A final answer against the turn's structured output (docs/API.md, "Structured output"): parsed
 * as JSON, then validated against the schema of a `json_schema` format; `json_object` asks for an
 * object. Pure but for compiling the schema.
 */
export function checkOutput(format: ResponseFormat, text: string): OutputCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `the answer is not JSON (${errorMessage(error)})` };
  }
  if (format.type === 'json_object') {
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? { ok: true, value } : { ok: false, problem: 'the answer is not a JSON object' };
  }
  let validate;
  try {
    validate = compileJsonSchema(format.schema);
  } catch (error) {
    return { ok: false, problem: `the schema "${format.name}" does not compile: ${errorMessage(error)}` };
  }
  const verdict = validate(value);
  return verdict.valid ? { ok: true, value } : { ok: false, problem: `the answer does not match the schema "${format.name}": ${describeValidationErrors(verdict.errors)}` };
}

/** Why a format cannot check any answer (its schema does not compile); undefined when it can. */
export function formatProblem(format: ResponseFormat): string | undefined {
  if (format.type === 'json_object') return undefined;
  try {
    compileJsonSchema(format.schema);
    return undefined;
  } catch (error) {
    return `not a JSON Schema: ${errorMessage(error)}`;
  }
}

/**
 * The messages a repair request adds after the history: the rejected answer, then what is wrong
 * with it, as a user message (every OpenAI-compatible provider takes one there, where a system
 * message past the first is refused by some chat templates). Kept out of the stored history.
 */
export function repairMessages(rejected: string, problems: readonly string[]): ChatMessage[] {
  return [
    { role: 'assistant', content: rejected },
    {
      role: 'user',
      content: `Your answer was rejected: ${problems.at(-1)}. Answer again with only the JSON the response format asks for, corrected.`,
    },
  ];
}

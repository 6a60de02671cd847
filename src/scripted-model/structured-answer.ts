import type { ChatRequest } from './chat-request-schema';
import { sampleArguments } from './sample-arguments';

/**
 * The answer of a request that asks for structured output (`response_format`), deterministic:
 * for `json_schema` the schema's sample (sample-arguments.ts), or with `misfit` JSON that does
 * not fit it; for `json_object` an empty object, or with `misfit` text that is not JSON.
 * Undefined when the request asks for no JSON. Pure.
 */
export function structuredAnswer(request: ChatRequest, misfit: boolean): string | undefined {
  const format = request.response_format;
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return misfit ? 'This answer is not JSON.' : '{}';
  const schema = format.json_schema?.schema ?? {};
  return JSON.stringify(misfit ? misfitOf(schema) : sampleArguments(schema));
}

/**
 * A value the schema refuses: its sample without the first required property, or, where an
 * object needs none, a value of another type than the schema's.
 */
function misfitOf(schema: Record<string, unknown>): unknown {
  const sample = sampleArguments(schema);
  const required = Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : [];
  if (required.length > 0 && typeof sample === 'object' && sample !== null && !Array.isArray(sample)) {
    const { [required[0]!]: _left, ...rest } = sample as Record<string, unknown>;
    return rest;
  }
  return typeof sample === 'object' && sample !== null ? 'not an object' : { unexpected: true };
}

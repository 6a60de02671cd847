import type { z } from 'zod';
import { chatRequestSchema, type ChatRequest } from './chat-request-schema';
import { checkToolMessageOrder } from './check-tool-message-order';
import { formatPath } from '../errors/zod-issues';
import { invalidRequest, type OpenAiError } from './openai-error';

export type ChatRequestValidation = { ok: true; request: ChatRequest } | { ok: false; error: OpenAiError };

type Issue = z.core.$ZodIssue;

/**
 * Checks a parsed JSON body as OpenAI would and names the first problem the way OpenAI does
 * (`Missing required parameter: 'messages[1].tool_call_id'.`), so that a client bug shows up
 * against the scripted model exactly as it would against the real provider.
 */
export function validateChatRequest(body: unknown): ChatRequestValidation {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, error: invalidRequest('The request body must be a JSON object.') };
  }
  const parsed = chatRequestSchema.safeParse(body);
  if (!parsed.success) return { ok: false, error: describeIssue(parsed.error.issues[0]!, body) };
  const request = parsed.data;
  const error = checkToolMessageOrder(request.messages) ?? checkToolChoice(request);
  return error ? { ok: false, error } : { ok: true, request };
}

function checkToolChoice(request: ChatRequest): OpenAiError | undefined {
  const choice = request.tool_choice;
  if (!choice) return undefined;
  if (!request.tools?.length) {
    return invalidRequest("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", 'tool_choice');
  }
  if (typeof choice === 'object' && !request.tools.some((tool) => tool.function.name === choice.function.name)) {
    return invalidRequest(`Invalid value for 'tool_choice': function '${choice.function.name}' is not among the 'tools'.`, 'tool_choice');
  }
  return undefined;
}

function describeIssue(outer: Issue, body: unknown): OpenAiError {
  const { issue, path } = innermost(outer, outer.path);
  const param = formatPath(path);
  const value = valueAt(body, path);
  if (value === undefined) return invalidRequest(`Missing required parameter: '${param}'.`, param);
  switch (issue.code) {
    case 'invalid_type':
      return invalidRequest(`Invalid type for '${param}': expected ${withArticle(issue.expected)}, but got ${describeType(value)} instead.`, param);
    case 'invalid_value':
      return invalidRequest(`Invalid value: ${JSON.stringify(value)}. Supported values are: ${quoteAll(issue.values)}.`, param);
    case 'invalid_union':
      if (issue.discriminator && 'options' in issue && issue.options) {
        return invalidRequest(`Invalid value: ${JSON.stringify(value)}. Supported values are: ${quoteAll(issue.options)}.`, param);
      }
      break;
    case 'too_small':
      if (Number(issue.minimum) === 1 && (issue.origin === 'array' || issue.origin === 'string')) {
        const empty = issue.origin === 'array' ? 'empty array' : 'empty string';
        return invalidRequest(`Invalid '${param}': ${empty}. Expected ${withArticle(issue.origin)} with minimum length 1, but got an ${empty} instead.`, param);
      }
      break;
    default:
      // Every other issue: zod's own message, as below.
      break;
  }
  return invalidRequest(`Invalid '${param}': ${issue.message}.`, param);
}

/**
 * A union reports only "no branch fits"; when exactly one branch got past the type check
 * (the content is an array, but a part inside is wrong), its issue is the one worth naming.
 */
function innermost(issue: Issue, path: PropertyKey[]): { issue: Issue; path: PropertyKey[] } {
  if (issue.code !== 'invalid_union') return { issue, path };
  const deeper = issue.errors.filter((branch) => branch.some((each) => each.path.length > 0 || each.code !== 'invalid_type'));
  const inner = deeper.length === 1 ? deeper[0]![0] : undefined;
  return inner ? innermost(inner, [...path, ...inner.path]) : { issue, path };
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  return withArticle(Array.isArray(value) ? 'array' : typeof value);
}

function withArticle(noun: string): string {
  return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

function quoteAll(values: readonly unknown[]): string {
  return values.map((value) => `'${String(value)}'`).join(', ');
}

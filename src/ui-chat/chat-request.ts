import { z } from 'zod';
import { AppError } from '../errors/app-error';
import { describeFieldIssue, fieldIssues, formatPath, type FieldIssue } from '../errors/zod-issues';
import { unstorableTextProblem } from '../storable/storable-text';
import type { ClientAnswer } from '../tool-calls/client-tool-answers';

/**
 * The body of the AI SDK's default chat transport: `{id, messages, trigger, messageId?}` plus
 * whatever `body` the app adds (ignored). Parts are read loosely: only the ones Switchyard
 * takes from the last message are checked closely (readChatRequest).
 */
const uiPart = z.looseObject({ type: z.string().min(1).max(200) });
const uiMessage = z.looseObject({
  id: z.string().min(1).max(150),
  role: z.enum(['system', 'user', 'assistant']),
  parts: z.array(uiPart).max(10_000),
});
/** A chat id is the conversation's `externalId`: text PostgreSQL can store, as the route's too. */
export const chatIdSchema = z
  .string()
  .min(1)
  .max(200)
  .superRefine((id, context) => {
    const problem = unstorableTextProblem(id);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  });
export const chatRequestSchema = z.looseObject({
  id: chatIdSchema,
  messages: z.array(uiMessage).min(1).max(100_000),
  trigger: z.enum(['submit-message', 'regenerate-message']).default('submit-message'),
  messageId: z.string().max(150).optional(),
  /** The transport's `body` option: the agent a new chat's conversation runs on (read on its first POST only). */
  agent: z.string().min(1).max(120).optional(),
});
export type ChatRequest = z.infer<typeof chatRequestSchema>;

const textPart = z.object({ type: z.literal('text'), text: z.string().max(500_000) });
const imagePart = z.object({ type: z.literal('file'), mediaType: z.string().startsWith('image/'), url: z.string().min(1) });
const answeredToolPart = z.discriminatedUnion('state', [
  z.looseObject({ toolCallId: z.string().min(1).max(200), state: z.literal('output-available'), output: z.unknown() }),
  z.looseObject({ toolCallId: z.string().min(1).max(200), state: z.literal('output-error'), errorText: z.string().max(10_000) }),
]);
/** A part `addToolApprovalResponse` answered: `approval.id` is the `approvalId` of its `tool-approval-request`. */
const respondedToolPart = z.looseObject({
  toolCallId: z.string().min(1).max(200),
  state: z.literal('approval-responded'),
  approval: z.looseObject({ id: z.string().min(1).max(200), approved: z.boolean(), reason: z.string().max(10_000).optional() }),
});

export type TurnContent = string | ({ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } })[];

/** A person's decision on a call, as the AI SDK's `addToolApprovalResponse` records it. */
export interface ApprovalAnswer {
  toolCallId: string;
  approvalId: string;
  approved: boolean;
  reason?: string;
}

/**
 * What a POST asks for: a new user message; an earlier user message (`messageId`, the AI SDK's
 * id of it) answered again (`regenerate()`) or replaced (`sendMessage` with its `messageId`); or
 * answers to client tool calls and decisions on calls awaiting approval, of the turn `turnId`.
 */
export type ChatAsk =
  | { kind: 'message'; messageId: string; content: TurnContent }
  | { kind: 'regenerate'; messageId: string }
  | { kind: 'edit'; messageId: string; content: TurnContent }
  | { kind: 'answers'; turnId: string; answers: { toolCallId: string; answer: ClientAnswer }[]; approvals: ApprovalAnswer[] };

/**
 * Stored history wins (docs/API.md): only the last message is read. A user message is a new
 * turn, or with `regenerate-message` the one to answer again (the AI SDK drops the answer
 * before it sends), or when the body's `messageId` is its id, the new content of that earlier
 * message (the AI SDK keeps an edited message's id). An assistant message (whose id is the turn
 * id, from `start.messageId`) carries answers in its tool parts that have an output, and
 * decisions in those `approval-responded`. Pure; bad input is an `invalid_request` AppError.
 */
export function readChatRequest(request: ChatRequest): ChatAsk {
  const index = request.messages.length - 1;
  const last = request.messages[index]!;
  if (request.trigger === 'regenerate-message') {
    if (last.role !== 'user') throw invalid(['messages', index, 'role'], 'to regenerate, the last message must be the user message to answer again');
    return { kind: 'regenerate', messageId: last.id };
  }
  if (last.role === 'user') {
    const content = userContent(last.parts, index);
    return request.messageId === last.id ? { kind: 'edit', messageId: last.id, content } : { kind: 'message', messageId: last.id, content };
  }
  if (last.role === 'assistant') {
    const answers = toolAnswers(last.parts, index);
    const approvals = approvalAnswers(last.parts, index);
    if (answers.length === 0 && approvals.length === 0) {
      throw invalid(['messages', index], 'nothing new: the last message is neither a new user message nor an answer to a client tool call or an approval request');
    }
    return { kind: 'answers', turnId: last.id, answers, approvals };
  }
  throw invalid(['messages', index, 'role'], 'the last message must be a new user message, or the assistant message answering client tools or approval requests');
}

/** Whether a part is one of the AI SDK's tool parts (`tool-<name>` or `dynamic-tool`). */
export function isToolPart(part: { type: string }): boolean {
  return part.type.startsWith('tool-') || part.type === 'dynamic-tool';
}

function userContent(parts: z.infer<typeof uiPart>[], index: number): TurnContent {
  const content: Exclude<TurnContent, string> = [];
  parts.forEach((part, partIndex) => {
    const at = ['messages', index, 'parts', partIndex];
    if (part.type === 'text') {
      const text = parseWith(textPart, part, at);
      if (text.text.length > 0) content.push({ type: 'text', text: text.text });
    } else if (part.type === 'file') {
      const image = parseWith(imagePart, part, at, 'only image files (mediaType image/*, with a url) can be sent');
      content.push({ type: 'image_url', image_url: { url: image.url } });
    }
    // Other parts (data, sources, step markers) are the client's own and are not sent to the model.
  });
  // An image alone is a message (vision models answer it); nothing at all is not.
  if (content.length === 0) throw invalid(['messages', index, 'parts'], 'the user message has no text and no image');
  return content.length === 1 && content[0]!.type === 'text' ? content[0]!.text : content;
}

function toolAnswers(parts: z.infer<typeof uiPart>[], index: number): { toolCallId: string; answer: ClientAnswer }[] {
  return parts.flatMap((part, partIndex) => {
    if (!isToolPart(part) || (part.state !== 'output-available' && part.state !== 'output-error')) return [];
    const answered = parseWith(answeredToolPart, part, ['messages', index, 'parts', partIndex]);
    const answer: ClientAnswer =
      answered.state === 'output-available' ? { result: answered.output ?? null } : { error: { code: 'client_tool_error', message: answered.errorText } };
    return [{ toolCallId: answered.toolCallId, answer }];
  });
}

function approvalAnswers(parts: z.infer<typeof uiPart>[], index: number): ApprovalAnswer[] {
  return parts.flatMap((part, partIndex) => {
    if (!isToolPart(part) || part.state !== 'approval-responded') return [];
    const { toolCallId, approval } = parseWith(respondedToolPart, part, ['messages', index, 'parts', partIndex]);
    return [{ toolCallId, approvalId: approval.id, approved: approval.approved, ...(approval.reason !== undefined ? { reason: approval.reason } : {}) }];
  });
}

/** Parses the part at `path` of the body; its first issue, named from the body's root, is the error. */
function parseWith<T>(schema: z.ZodType<T>, value: unknown, path: PropertyKey[], message?: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = fieldIssues(parsed.error.issues, path)[0]!;
  throw invalidField({ field: issue.field, message: message ?? issue.message });
}

function invalid(path: PropertyKey[], message: string): AppError {
  return invalidField({ field: formatPath(path), message });
}

function invalidField(issue: FieldIssue): AppError {
  return new AppError('invalid_request', `invalid request: ${describeFieldIssue(issue)}`, [issue]);
}

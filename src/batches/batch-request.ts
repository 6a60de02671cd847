import { createHash } from 'node:crypto';
import { z } from 'zod';
import { toolChoiceSchema, turnContentSchema } from '../api/request-schemas';
import { AppError } from '../errors/app-error';
import { describeZodIssues, fieldIssues } from '../errors/zod-issues';

/** The highest `concurrency` a batch may ask for (docs/API.md: "at most a documented limit"). */
export const MAX_BATCH_CONCURRENCY = 256;
export const DEFAULT_BATCH_CONCURRENCY = 8;
/** `priority` orders batches among themselves: higher runs first. */
export const DEFAULT_BATCH_PRIORITY = 5;
export const MAX_BATCH_PRIORITY = 9;
/** Line problems listed in one refusal; the count of the rest is said. */
const MAX_LISTED_PROBLEMS = 100;

const toolName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a tool name: letters, digits, _ or -, at most 64');
const message = z.union([turnContentSchema, z.object({ role: z.enum(['user', 'assistant']), content: turnContentSchema }).strict()]);
const itemFields = {
  customId: z.string().min(1).max(200),
  messages: z.array(message).min(1).max(100),
  system: z.string().max(200_000),
  model: z.string().min(1).max(200),
  tools: z.array(toolName).max(128),
  toolChoice: toolChoiceSchema,
  maxSteps: z.number().int().min(1).max(100),
  metadata: z.record(z.string(), z.unknown()),
};
const partialItemSchema = z.object(itemFields).partial().strict();
const itemSchema = z
  .object({ ...itemFields, messages: itemFields.messages.optional() })
  .partial()
  .strict();

export type BatchMessage = z.infer<typeof message>;
/** One item as stored: defaults applied, at least one user message. */
export type BatchItemSpec = Omit<z.infer<typeof partialItemSchema>, 'customId' | 'messages'> & { messages: BatchMessage[] };

export interface BatchItem {
  /** 1-based position in the JSON `items`, or line in the JSONL body. */
  line: number;
  customId?: string;
  spec: BatchItemSpec;
}

export interface BatchOptions {
  concurrency: number;
  priority: number;
  metadata?: Record<string, unknown>;
  skipInvalid: boolean;
}

export interface ParsedBatch {
  options: BatchOptions;
  items: BatchItem[];
  /** Lines left out under `skipInvalid`. */
  skipped: { line: number; message: string }[];
  /** Of the whole request: tells a repeat of an Idempotency-Key from another batch. */
  requestHash: string;
}

const optionsSchema = z
  .object({
    concurrency: z.coerce.number().int().min(1).max(MAX_BATCH_CONCURRENCY).default(DEFAULT_BATCH_CONCURRENCY),
    priority: z.coerce.number().int().min(0).max(MAX_BATCH_PRIORITY).default(DEFAULT_BATCH_PRIORITY),
    skipInvalid: z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]).default(false),
  })
  .strict();
const jsonBodySchema = optionsSchema.extend({
  items: z.array(z.unknown()),
  metadata: z.record(z.string(), z.unknown()).optional(),
  defaults: partialItemSchema.omit({ customId: true }).optional(),
});

type Problem = { line: number; field?: string; message: string };

/**
 * A submission, JSON (`{items, concurrency?, priority?, metadata?, defaults?, skipInvalid?}`)
 * or JSONL (one item a line, the options as query parameters), checked whole: every bad item or
 * line is named by its line, and unless `skipInvalid` one bad item refuses the batch. Pure.
 */
export function parseBatchRequest(input: { json?: unknown; jsonl?: string; query: Record<string, unknown>; maxItems: number }): ParsedBatch {
  const { values, options, defaults, metadata, problems } = input.jsonl !== undefined ? readJsonl(input.jsonl, input.query) : readJson(input.json, input.query);
  if (values.length > input.maxItems) {
    throw new AppError('invalid_request', `a batch holds at most ${input.maxItems} items (MAX_BATCH_ITEMS); this one has ${values.length}`);
  }
  const items: BatchItem[] = [];
  const customIds = new Set<string>();
  for (const { line, value } of values) {
    const parsed = itemSchema.safeParse(value);
    if (!parsed.success) {
      // Every problem of the line at once: whoever fixes it should not find them one run at a time.
      const issues = fieldIssues(parsed.error.issues);
      if (issues.length === 0) problems.push({ line, message: 'invalid item' });
      for (const issue of issues) problems.push({ line, ...(issue.field ? { field: issue.field } : {}), message: issue.message });
      continue;
    }
    const { customId, ...fields } = parsed.data;
    const spec = { ...defaults, ...fields } as Partial<BatchItemSpec>;
    if (!spec.messages || !spec.messages.some((each) => typeof each !== 'object' || Array.isArray(each) || each.role === 'user')) {
      problems.push({ line, field: 'messages', message: 'needs at least one user message' });
      continue;
    }
    if (customId !== undefined) {
      if (customIds.has(customId)) {
        problems.push({ line, field: 'customId', message: `${JSON.stringify(customId)} is used by an earlier item` });
        continue;
      }
      customIds.add(customId);
    }
    items.push({ line, ...(customId !== undefined ? { customId } : {}), spec: spec as BatchItemSpec });
  }
  if (problems.length > 0 && !options.skipInvalid) refuse(problems);
  if (items.length === 0) throw new AppError('invalid_request', 'the batch has no items to run', problems.length > 0 ? problems.slice(0, MAX_LISTED_PROBLEMS) : undefined);
  problems.sort((a, b) => a.line - b.line);
  const requestHash = createHash('sha256').update(JSON.stringify({ options, metadata, items })).digest('hex');
  return {
    options: { ...options, ...(metadata ? { metadata } : {}) },
    items,
    skipped: skippedLines(problems),
    requestHash,
  };
}

/** One entry per skipped line, its problems joined. */
function skippedLines(problems: readonly Problem[]): { line: number; message: string }[] {
  const byLine = new Map<number, string[]>();
  for (const { line, field, message } of problems) byLine.set(line, [...(byLine.get(line) ?? []), field ? `${field}: ${message}` : message]);
  return [...byLine].map(([line, messages]) => ({ line, message: messages.join('; ') }));
}

function readJson(body: unknown, query: Record<string, unknown>) {
  if (Object.keys(query).length > 0) throw new AppError('invalid_request', 'with a JSON body, the options go in the body, not the query');
  const parsed = jsonBodySchema.safeParse(body);
  if (!parsed.success) {
    throw new AppError('invalid_request', `invalid batch: ${describeZodIssues(parsed.error.issues)}`, fieldIssues(parsed.error.issues).map((issue) => ({ line: 0, ...issue })));
  }
  const { items, defaults, metadata, ...options } = parsed.data;
  return { values: items.map((value, index) => ({ line: index + 1, value })), options, defaults: defaults ?? {}, metadata, problems: [] as Problem[] };
}

function readJsonl(text: string, query: Record<string, unknown>) {
  const parsed = optionsSchema.safeParse(query);
  if (!parsed.success) {
    throw new AppError('invalid_request', `invalid batch options: ${describeZodIssues(parsed.error.issues)}`, fieldIssues(parsed.error.issues).map((issue) => ({ line: 0, ...issue })));
  }
  const values: { line: number; value: unknown }[] = [];
  const problems: Problem[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (!line) return;
    try {
      values.push({ line: index + 1, value: JSON.parse(line) });
    } catch {
      problems.push({ line: index + 1, message: 'not valid JSON' });
    }
  });
  return { values, options: parsed.data, defaults: {}, metadata: undefined, problems };
}

function refuse(problems: Problem[]): never {
  const sorted = [...problems].sort((a, b) => a.line - b.line);
  const first = sorted[0]!;
  const more = sorted.length > 1 ? ` (and ${sorted.length - 1} more)` : '';
  throw new AppError(
    'invalid_request',
    `invalid batch: line ${first.line}${first.field ? `: ${first.field}` : ''}: ${first.message}${more}; nothing was stored (skipInvalid: true runs the valid items)`,
    sorted.slice(0, MAX_LISTED_PROBLEMS),
  );
}

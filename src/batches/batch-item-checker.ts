import { createHash, type Hash } from 'node:crypto';
import { AppError } from '../errors/app-error';
import { fieldIssues } from '../errors/zod-issues';
import { findUnstorableValue } from '../storable/storable-json';
import { itemSchema, type BatchDefaults, type BatchItem, type BatchItemSpec, type BatchOptions } from '../store/batch-item';
import { isOpenAiBatchLine, openAiLineToItem, type OpenAiEndpoint } from '../openai/batch-line';
import type { UsableTools } from '../openai/function-tools';

/** Line problems listed in one refusal; the count of the rest is said. */
const MAX_LISTED_PROBLEMS = 100;

export interface LineProblem {
  line: number;
  field?: string;
  message: string;
  /** An OpenAI line's error code, for its batch's `errors.data`. */
  code?: string;
}

export interface CheckedBatch {
  /** Lines left out under `skipInvalid`. */
  skipped: { line: number; message: string }[];
  /** Items kept. */
  count: number;
  /** Of the whole request: tells a repeat of an Idempotency-Key from another batch. */
  requestHash: string;
}

/**
 * Checks a submission's items one at a time, as they are read, so that no submission is held
 * whole: each bad item is a problem of its line (storability, nesting and tools included, so
 * that `skipInvalid` skips it and a refusal names its line). What it keeps of the items in
 * between is bounded by MAX_BATCH_ITEMS (their customIds, the skipped lines); the request hash
 * is computed as the items pass. Pure.
 */
export class BatchItemChecker {
  private readonly customIds = new Set<string>();
  private readonly problems: LineProblem[] = [];
  private problemCount = 0;
  private seen = 0;
  private kept = 0;
  private readonly hash: Hash;

  constructor(
    private readonly input: {
      options: BatchOptions;
      defaults: BatchDefaults;
      maxItems: number;
      /** The tools the submitting user may use. */
      usableTools: UsableTools;
      /** An OpenAI batch's `endpoint`: the `url` its lines must have (any, when absent). */
      openAiEndpoint?: OpenAiEndpoint;
    },
  ) {
    const { metadata, ...options } = input.options;
    // The same text as JSON.stringify({options, metadata, items}) over the kept items, written
    // as they pass: batches stored before items were streamed keep their Idempotency-Keys.
    this.hash = createHash('sha256').update(`{"options":${JSON.stringify(options)}${metadata === undefined ? '' : `,"metadata":${JSON.stringify(metadata)}`},"items":[`);
  }

  /** A JSONL line (blank ones carry no item): the item to store, or null when it is left out. */
  checkLine(line: number, text: string): BatchItem | null {
    const trimmed = text.trim();
    if (!trimmed) return null;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      this.countItem();
      return this.problem({ line, message: 'not valid JSON' });
    }
    return this.checkValue(line, value);
  }

  /** A line whose text was not kept (longer than it may be): counts as an item, and is its problem. */
  refuseLine(problem: LineProblem): null {
    this.countItem();
    return this.problem(problem);
  }

  /**
   * One item's value (a JSON `items` entry, a parsed JSONL line): a Switchyard item, or a line of
   * OpenAI's Batch API (`{custom_id, method, url, body}`), which runs as the item it describes.
   */
  checkValue(line: number, value: unknown): BatchItem | null {
    this.countItem();
    // Before anything serialises or hashes it: nesting 100,000 deep would overflow the stack.
    const unstorable = findUnstorableValue(value);
    if (unstorable) return this.problem({ line, ...(unstorable.field !== '(body)' ? { field: unstorable.field } : {}), message: unstorable.message });
    if (isOpenAiBatchLine(value)) {
      const converted = openAiLineToItem(value, this.input.usableTools, this.input.openAiEndpoint);
      if (!converted.ok) {
        for (const problem of converted.problems) this.problem({ line, ...problem });
        return null;
      }
      return this.accept(line, converted.customId, converted.spec);
    }
    const parsed = itemSchema.safeParse(value);
    if (!parsed.success) {
      const issues = fieldIssues(parsed.error.issues);
      if (issues.length === 0) return this.problem({ line, message: 'invalid item' });
      // Every problem of the line at once: whoever fixes it should not find them one run at a time.
      for (const issue of issues) this.problem({ line, ...(issue.field ? { field: issue.field } : {}), message: issue.message });
      return null;
    }
    const { customId, ...fields } = parsed.data;
    const spec = { ...this.input.defaults, ...fields } as Partial<BatchItemSpec>;
    if (!spec.messages || !spec.messages.some((each) => typeof each !== 'object' || Array.isArray(each) || each.role === 'user')) {
      return this.problem({ line, field: 'messages', message: 'needs at least one user message' });
    }
    for (const field of ['tools', 'requireApproval'] as const) {
      const unknownTool = fields[field]?.find((name) => !this.input.usableTools.has(name));
      if (unknownTool !== undefined) return this.problem({ line, field, message: `unknown tool "${unknownTool}"` });
    }
    return this.accept(line, customId, spec as BatchItemSpec);
  }

  /** A checked item, kept unless its customId was taken by an earlier one. */
  private accept(line: number, customId: string | undefined, spec: BatchItemSpec): BatchItem | null {
    if (customId !== undefined) {
      if (this.customIds.has(customId)) return this.problem({ line, field: 'customId', message: `${JSON.stringify(customId)} is used by an earlier item` });
      this.customIds.add(customId);
    }
    const item: BatchItem = { line, ...(customId !== undefined ? { customId } : {}), spec };
    this.hash.update(`${this.kept > 0 ? ',' : ''}${JSON.stringify(item)}`);
    this.kept++;
    return item;
  }

  /** Whether the items kept so far will be stored: not once a problem refuses the batch. */
  get refusing(): boolean {
    return this.problemCount > 0 && !this.input.options.skipInvalid;
  }

  /** After the last item: what to store with the batch, or the refusal naming every bad line. */
  finish(): CheckedBatch {
    if (this.refusing) refuse(this.problems, this.problemCount);
    if (this.kept === 0) {
      throw new AppError('invalid_request', 'the batch has no items to run', this.problems.length > 0 ? this.problems.slice(0, MAX_LISTED_PROBLEMS) : undefined);
    }
    return {
      skipped: skippedLines(this.problems),
      count: this.kept,
      requestHash: this.hash.update(']}').digest('hex'),
    };
  }

  private countItem(): void {
    this.seen++;
    if (this.seen > this.input.maxItems) {
      throw new AppError('invalid_request', `a batch holds at most ${this.input.maxItems} items (MAX_BATCH_ITEMS); this one has more`);
    }
  }

  private problem(problem: LineProblem): null {
    this.problemCount++;
    // Under skipInvalid every skipped line is stored with the batch (at most MAX_BATCH_ITEMS);
    // a refusal lists the first ones only.
    if (this.input.options.skipInvalid || this.problems.length < MAX_LISTED_PROBLEMS) this.problems.push(problem);
    return null;
  }
}

/** One entry per skipped line, its problems joined. */
function skippedLines(problems: readonly LineProblem[]): { line: number; message: string }[] {
  const byLine = new Map<number, string[]>();
  for (const { line, field, message } of problems) byLine.set(line, [...(byLine.get(line) ?? []), field ? `${field}: ${message}` : message]);
  return [...byLine].map(([line, messages]) => ({ line, message: messages.join('; ') }));
}

function refuse(problems: LineProblem[], count: number): never {
  const first = problems[0]!;
  const more = count > 1 ? ` (and ${count - 1} more)` : '';
  throw new AppError(
    'invalid_request',
    `invalid batch: line ${first.line}${first.field ? `: ${first.field}` : ''}: ${first.message}${more}; nothing was stored (skipInvalid: true runs the valid items)`,
    problems,
  );
}

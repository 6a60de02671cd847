import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { appendFile, open, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { SingleBar } from 'cli-progress';
import { httpApi, SwitchyardApiError } from '@switchyard/client';
import type { BatchProgressFrame } from './batch-progress';

export interface BatchCliOptions {
  baseUrl: string;
  token: string;
  /** Where human-facing progress goes (stderr): a bar on a terminal, plain lines otherwise. */
  progress: NodeJS.WriteStream;
  /** Ends the follow (Ctrl-C); the batch goes on in the service. */
  signal: AbortSignal;
  /** Every request's fetch (the CLI's names the URL when nothing answers there). */
  fetch: typeof fetch;
}

type BatchView = {
  id: string;
  status: string;
  counts: { total: number; succeeded: number; failed: number; cancelled: number };
  usage: { totalTokens: number };
  skipped?: { line: number; message: string }[];
};

/** How long `batch run` keeps asking a busy service (503 or 429 with Retry-After) before it gives up. */
const BUSY_PATIENCE_MS = 10 * 60_000;

/**
 * The submission's answer once the service takes it: a busy answer (503 `unavailable`, 429
 * `rate_limited`) is asked again after its Retry-After, which is safe because the file's
 * Idempotency-Key makes every try the same batch. Undefined when Ctrl-C or the patience ran out.
 */
async function submitWhenServed(options: BatchCliOptions, submit: () => Promise<Response>): Promise<Response | undefined> {
  const deadline = Date.now() + BUSY_PATIENCE_MS;
  for (;;) {
    const response = await submit();
    if (response.status !== 503 && response.status !== 429) return response;
    const waitMs = retryAfterMs(response.headers.get('retry-after'));
    if (Date.now() + waitMs > deadline) return response;
    const { error } = (await response.json().catch(() => ({}))) as { error?: { message?: string } };
    options.progress.write(`the service is busy (${response.status}${error?.message ? `: ${error.message}` : ''}); trying again in ${Math.round(waitMs / 1000)} s\n`);
    try {
      await sleep(waitMs, undefined, { signal: options.signal });
    } catch {
      return undefined;
    }
  }
}

/** Retry-After in seconds (the service's form), 5 s when absent or unreadable. */
function retryAfterMs(header: string | null): number {
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 5000;
}

/** Line problems printed for a refused file; the count of the rest is said. */
const MAX_PRINTED_PROBLEMS = 50;

/**
 * `batch run <items.jsonl> --out <results.jsonl>`: submits the file (its content names the
 * batch: a second run of the same file follows the same batch), shows progress, and appends each
 * ended item's result line to `--out` once; a run after a crash or Ctrl-C writes only what
 * `--out` lacks. Resolves with the exit code.
 */
export async function runBatchFile(input: { file: string; out: string; concurrency?: number; skipInvalid?: boolean }, options: BatchCliOptions): Promise<number> {
  const body = await readFile(input.file);
  const idempotencyKey = `file-${createHash('sha256').update(body).digest('hex').slice(0, 40)}`;
  const query = new URLSearchParams({
    ...(input.concurrency ? { concurrency: String(input.concurrency) } : {}),
    ...(input.skipInvalid ? { skipInvalid: 'true' } : {}),
  }).toString();
  const response = await submitWhenServed(options, () =>
    options.fetch(`${options.baseUrl}/v1/batches${query ? `?${query}` : ''}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/x-ndjson', 'idempotency-key': idempotencyKey },
      body,
    }),
  );
  if (!response) return 1;
  const submitted = (await response.json()) as BatchView & { error?: { message: string; details?: { line: number; field?: string; message: string }[] } };
  if (!response.ok) {
    options.progress.write(refusal(response.status, submitted.error, input.skipInvalid ?? false));
    return 1;
  }
  options.progress.write(`${response.status === 202 ? 'submitted' : 'resuming'} batch ${submitted.id} (${submitted.counts.total} items) → ${input.out}\n`);
  const skipped = submitted.skipped ?? [];
  if (skipped.length > 0) {
    const listed = skipped.slice(0, MAX_PRINTED_PROBLEMS).map((each) => `  line ${each.line}: ${each.message}`);
    const more = skipped.length > listed.length ? [`  (and ${skipped.length - listed.length} more)`] : [];
    options.progress.write([`skipped ${skipped.length} invalid line${skipped.length === 1 ? '' : 's'}:`, ...listed, ...more].join('\n') + '\n');
  }

  const written = await writtenLines(input.out);
  const writer = new ResultsWriter(options, submitted.id, input.out, written);
  const display = progressDisplay(options.progress, submitted.counts.total);
  try {
    const finished = await followProgress(options, submitted.id, async (frame) => {
      if (frame.type === 'batch-progress') display.update(frame);
      const { succeeded, failed, cancelled } = frame.counts;
      await writer.catchUp(succeeded + failed + cancelled);
    });
    await writer.catchUpAll();
    display.stop();
    if (!finished) {
      options.progress.write(`stopped following; the batch goes on. Run the same command again to resume: ${writer.count} results in ${input.out}\n`);
      return 130;
    }
    options.progress.write(`batch ${submitted.id} ${finished.status}: ${describeCounts(finished.counts)}; ${writer.count} results in ${input.out}\n`);
    return finished.counts.failed > 0 ? 2 : 0;
  } finally {
    display.stop();
  }
}

/** Why the service refused the file: its message, every problem of every line (up to a limit), and how to run the valid lines. */
function refusal(status: number, error: { message: string; details?: { line: number; field?: string; message: string }[] } | undefined, skipInvalid: boolean): string {
  const details = error?.details ?? [];
  const listed = details.slice(0, MAX_PRINTED_PROBLEMS).map((detail) => `  line ${detail.line}${detail.field ? ` ${detail.field}` : ''}: ${detail.message}`);
  const more = details.length > listed.length ? [`  (and ${details.length - listed.length} more)`] : [];
  const hint = details.some((detail) => detail.line > 0) && !skipInvalid ? ['batch run --skip-invalid runs the valid lines and lists the others'] : [];
  return [`batch refused: ${error?.message ?? status}`, ...listed, ...more, ...hint].join('\n') + '\n';
}

/** How often the download goes back to the first index `--out` lacks, for items that ended out of order. */
const WHOLE_PASS_MS = 15_000;

/** What `--out` holds of an item: its line's status and conversation (a retry runs it in another). */
interface WrittenLine {
  status: string;
  conversationId: string;
}

/**
 * Result lines of ended items not yet in `--out`, appended as they come, one line per item. The
 * download follows the tail (after the highest index written), and now and then goes back to
 * the first index missing: one slow item early in a large batch must not make every progress
 * frame download everything after it again. An item that ran again after `batch retry` gets its
 * new line in place of the old one.
 */
class ResultsWriter {
  /** Every index up to this one is in the file, and not as failed (a retry may run a failed item again). */
  private prefix = -1;
  private highest = -1;
  /** The first download goes back to the start: a resumed run may lack items anywhere. */
  private lastWholePassAt = 0;
  private lastEnded = -1;

  constructor(
    private readonly options: BatchCliOptions,
    private readonly batchId: string,
    private readonly out: string,
    private readonly written: Map<number, WrittenLine>,
  ) {
    for (const index of written.keys()) this.highest = Math.max(this.highest, index);
    this.advancePrefix();
  }

  get count(): number {
    return this.written.size;
  }

  /** `ended`: how many items the batch says have ended; nothing is downloaded while that stays the same. */
  async catchUp(ended: number): Promise<void> {
    const whole = Date.now() - this.lastWholePassAt >= WHOLE_PASS_MS;
    if (!whole && ended === this.lastEnded) return;
    this.lastEnded = ended;
    await (whole ? this.catchUpAll() : this.download(this.highest));
  }

  /** Everything `--out` lacks, from the first index it lacks (or holds as failed). */
  async catchUpAll(): Promise<void> {
    this.lastWholePassAt = Date.now();
    await this.download(this.prefix);
  }

  private async download(after: number): Promise<void> {
    const response = await this.options.fetch(`${this.options.baseUrl}/v1/batches/${this.batchId}/results?after=${after}`, {
      headers: { authorization: `Bearer ${this.options.token}` },
    });
    if (!response.ok || !response.body) throw new SwitchyardApiError(response.status, 'http_error', `results answered ${response.status}`);
    const fresh: string[] = [];
    const replaced = new Set<number>();
    for await (const line of lines(response.body)) {
      if (!line.trim()) continue;
      const result = JSON.parse(line) as { index: number } & WrittenLine;
      const before = this.written.get(result.index);
      if (before && before.conversationId === result.conversationId && before.status === result.status) continue;
      if (before) replaced.add(result.index);
      this.written.set(result.index, { status: result.status, conversationId: result.conversationId });
      this.highest = Math.max(this.highest, result.index);
      fresh.push(line);
    }
    if (replaced.size > 0) await dropLines(this.out, replaced);
    // Appended only once read whole: a crash leaves whole lines, never half of one.
    if (fresh.length > 0) await appendFile(this.out, `${fresh.join('\n')}\n`);
    this.advancePrefix();
  }

  private advancePrefix(): void {
    for (let next = this.written.get(this.prefix + 1); next && next.status !== 'failed'; next = this.written.get(this.prefix + 1)) this.prefix++;
  }
}

/** Rewrites `--out` without the lines of these items (their items ran again), by a rename: never half a file. */
async function dropLines(out: string, indexes: Set<number>): Promise<void> {
  const kept: string[] = [];
  for await (const line of createInterface({ input: createReadStream(out) })) {
    if (line.trim() && !indexes.has((JSON.parse(line) as { index: number }).index)) kept.push(line);
  }
  const next = `${out}.rewrite`;
  await writeFile(next, kept.length > 0 ? `${kept.join('\n')}\n` : '');
  await rename(next, out);
}

/** Follows the batch's SSE progress until batch-finish (returned) or the signal (null). */
async function followProgress(
  options: BatchCliOptions,
  batchId: string,
  onFrame: (frame: BatchProgressFrame) => Promise<void>,
): Promise<Extract<BatchProgressFrame, { type: 'batch-finish' }> | null> {
  for (;;) {
    if (options.signal.aborted) return null;
    try {
      const response = await options.fetch(`${options.baseUrl}/v1/batches/${batchId}/events`, { headers: { authorization: `Bearer ${options.token}` }, signal: options.signal });
      if (!response.ok || !response.body) throw new SwitchyardApiError(response.status, 'http_error', `batch events answered ${response.status}`);
      let type = '';
      for await (const line of lines(response.body)) {
        if (line.startsWith('event: ')) type = line.slice('event: '.length);
        if (!line.startsWith('data: ')) continue;
        const frame = { type, ...JSON.parse(line.slice('data: '.length)) } as BatchProgressFrame;
        await onFrame(frame);
        if (frame.type === 'batch-finish') return frame;
      }
    } catch (error) {
      if (options.signal.aborted) return null;
      if (error instanceof SwitchyardApiError && error.status >= 400 && error.status < 500) throw error;
    }
    // The stream broke (a restart of the service): follow again.
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function progressDisplay(stream: NodeJS.WriteStream, total: number) {
  const startedAt = Date.now();
  let lastLine = 0;
  const bar = stream.isTTY
    ? new SingleBar({ format: 'batch [{bar}] {done}/{total} · failed {failed} · {tokens} tokens · {rate} items/s · ETA {eta_formatted}', stream, hideCursor: true })
    : null;
  bar?.start(total, 0, { done: 0, failed: 0, tokens: 0, rate: '0.0' });
  return {
    update(frame: Extract<BatchProgressFrame, { type: 'batch-progress' }>) {
      const done = frame.counts.succeeded + frame.counts.failed + frame.counts.cancelled;
      const rate = (done / Math.max(1, (Date.now() - startedAt) / 1000)).toFixed(1);
      const payload = { done, failed: frame.counts.failed, tokens: frame.usage.totalTokens, rate };
      if (bar) return bar.update(done, payload);
      // Not a terminal: a plain line now and then.
      if (Date.now() - lastLine < 2_000 && done < total) return;
      lastLine = Date.now();
      const perSecond = Number(rate);
      const eta = perSecond > 0 ? `, ETA ${Math.ceil((total - done) / perSecond)} s` : '';
      stream.write(`${done}/${total} done, ${frame.counts.failed} failed, ${frame.usage.totalTokens} tokens, ${rate} items/s${eta}\n`);
    },
    stop() {
      bar?.stop();
    },
  };
}

/**
 * What `--out` already holds, by index. A last line without its newline was cut by a crash in
 * the middle of a write: it is dropped, and its item written again.
 */
async function writtenLines(out: string): Promise<Map<number, WrittenLine>> {
  const written = new Map<number, WrittenLine>();
  if (!existsSync(out)) return written;
  const { size } = await stat(out);
  const handle = await open(out, 'r+');
  try {
    let end = size;
    const last = Buffer.alloc(1);
    while (end > 0) {
      await handle.read(last, 0, 1, end - 1);
      if (last[0] === 0x0a) break;
      end--;
    }
    if (end < size) await handle.truncate(end);
  } finally {
    await handle.close();
  }
  for await (const line of createInterface({ input: createReadStream(out) })) {
    if (!line.trim()) continue;
    const result = JSON.parse(line) as { index: number } & WrittenLine;
    written.set(result.index, { status: result.status, conversationId: result.conversationId });
  }
  return written;
}

function describeCounts(counts: BatchView['counts']): string {
  return `${counts.succeeded} succeeded, ${counts.failed} failed, ${counts.cancelled} cancelled of ${counts.total}`;
}

/** `batch status|cancel|retry|results <id>`. */
export async function batchCommand(command: string, batchId: string, options: Omit<BatchCliOptions, 'signal'> & { stdout: NodeJS.WriteStream }): Promise<number> {
  const http = httpApi(options);
  const path = `/v1/batches/${encodeURIComponent(batchId)}`;
  switch (command) {
    case 'status':
      options.stdout.write(`${JSON.stringify(await http('GET', path), null, 2)}\n`);
      return 0;
    case 'cancel':
    case 'retry':
      options.stdout.write(`${JSON.stringify(await http('POST', `${path}/${command}`), null, 2)}\n`);
      return 0;
    case 'results': {
      const response = await options.fetch(`${options.baseUrl}${path}/results`, { headers: { authorization: `Bearer ${options.token}` } });
      if (!response.ok || !response.body) throw new SwitchyardApiError(response.status, 'http_error', `results answered ${response.status}`);
      for await (const chunk of response.body) options.stdout.write(chunk as Uint8Array);
      return 0;
    }
    default:
      throw new Error(`unknown batch command ${command}`);
  }
}

function lines(body: ReadableStream<Uint8Array>) {
  return createInterface({ input: Readable.fromWeb(body as WebReadableStream<Uint8Array>) });
}

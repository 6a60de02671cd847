import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { sendError, sendJson } from './http-responses';
import type { CompletionPlan } from './plan-reply';
import { chunkObject, completionObject, SSE_DONE, sseEvent, usageChunk, usageOf, type CompletionMeta } from './wire-format';

export interface Delivery {
  plan: CompletionPlan;
  meta: CompletionMeta;
  promptTokens: number;
  /** Aborts when the client goes: pending pauses end and nothing more is written. */
  signal: AbortSignal;
  /** Told of what the answer is billed as it is generated, and once its usage is reported. */
  bill?: (completionTokens: number, reported: boolean) => void;
}

/** Events queued without a pause in between leave in writes of about this many characters. */
const BATCH_CHARS = 16 * 1024;

/**
 * Streams a plan as OpenAI does: the role chunk, the planned chunks, then the finish chunk,
 * the usage chunk and `[DONE]`, or the scripted failure. This server is also the baseline of
 * the benchmarks, so it must cost next to nothing: a zero pause sets no timer, events without
 * a pause between them share one write, and a full socket is waited on (`drain`), so a long
 * answer goes as fast as the client reads it, with bounded memory.
 */
export async function streamCompletion(res: ServerResponse, delivery: Delivery): Promise<void> {
  const { plan, meta, signal } = delivery;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  // The client learns the request was accepted before the first token, as with a real provider.
  res.flushHeaders();
  delivery.bill?.(0, false);

  let pending = '';
  let roleSent = false;
  const flush = async () => {
    if (pending === '') return;
    const data = pending;
    pending = '';
    if (!res.write(data)) await once(res, 'drain', { signal });
  };
  const queue = async (events: string) => {
    pending += roleSent ? events : sseEvent(chunkObject(meta, { role: 'assistant', content: '' })) + events;
    roleSent = true;
    if (pending.length >= BATCH_CHARS) await flush();
  };

  await quietlyOnAbort(signal, async () => {
    let completionTokens = 0;
    for (const chunk of plan.chunks) {
      if (chunk.delayMs > 0) {
        await flush();
        await sleep(chunk.delayMs, undefined, { signal });
      }
      await queue(sseEvent(chunkObject(meta, chunk.delta)));
      completionTokens += chunk.tokens;
      delivery.bill?.(completionTokens, false);
    }
    const ending = plan.ending;
    switch (ending.kind) {
      case 'finish': {
        const finish = ending.finishReason === null ? '' : sseEvent(chunkObject(meta, {}, ending.finishReason));
        const usage = meta.includeUsage ? sseEvent(usageChunk(meta, usageOf(delivery.promptTokens, completionTokens))) : '';
        await queue(finish + usage + SSE_DONE);
        await flush();
        res.end();
        delivery.bill?.(completionTokens, meta.includeUsage);
        return;
      }
      case 'error-event':
        await queue(sseEvent({ error: { message: ending.message, type: 'server_error', param: null, code: null } }));
        await flush();
        res.end();
        return;
      case 'cut':
        await flush();
        dropAfterFlush(res);
        return;
      case 'stall':
        // The tokens go out; then nothing more, until the client aborts or the server closes.
        await flush();
        return;
    }
  });
}

/** The non-streaming answer, after the time the stream would have taken. */
export async function sendCompletion(res: ServerResponse, delivery: Delivery): Promise<void> {
  const { plan, meta, signal } = delivery;
  await quietlyOnAbort(signal, async () => {
    let generationMs = 0;
    let completionTokens = 0;
    for (const chunk of plan.chunks) {
      generationMs += chunk.delayMs;
      completionTokens += chunk.tokens;
    }
    if (generationMs > 0) await sleep(generationMs, undefined, { signal });
    const ending = plan.ending;
    switch (ending.kind) {
      case 'finish': {
        sendJson(res, 200, completionObject(meta, plan, ending.finishReason, usageOf(delivery.promptTokens, completionTokens)));
        delivery.bill?.(completionTokens, true);
        return;
      }
      case 'error-event':
        sendError(res, { status: 500, message: ending.message, type: 'server_error', param: null, code: null });
        return;
      case 'cut':
        res.socket?.destroy();
        return;
      case 'stall':
        return;
    }
  });
}

/** Ends quietly when the client has gone: there is no one left to tell. */
async function quietlyOnAbort(signal: AbortSignal, deliver: () => Promise<void>): Promise<void> {
  try {
    await deliver();
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}

/** Drops the connection mid-body, but only once the tokens already written have left, so the client sees them first. */
function dropAfterFlush(res: ServerResponse): void {
  const socket = res.socket;
  socket?.end(() => socket.destroy());
}

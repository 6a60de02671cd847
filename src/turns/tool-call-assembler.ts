import type { AssistantToolCall } from '../providers/model-provider';

/** What the assembler tells the caller to announce, in stream order. */
export type AssemblerOutput =
  | { type: 'start'; toolCallId: string; toolName: string }
  | { type: 'delta'; toolCallId: string; argsTextDelta: string };

interface Buffer {
  id: string;
  name: string;
  argumentsText: string;
  /** Arguments that arrived before the call could be announced (no name yet). */
  started: boolean;
}

/**
 * Puts streamed tool-call fragments together by their index, whatever the provider does:
 * id and name only on the first fragment (OpenAI) or with the first arguments (vLLM, Groq),
 * arguments split anywhere, calls interleaved. A call with no id gets one from `generateId`,
 * and so does a call whose id is taken: calls are stored and keyed (`Idempotency-Key`) by
 * `(turnId, toolCallId)`, and some providers number their ids afresh in every answer
 * (`call_0` in step 1 and again in step 2), or repeat one within an answer.
 */
export class ToolCallAssembler {
  private readonly buffers = new Map<number, Buffer>();
  private readonly usedIds: Set<string>;

  /** `takenIds`: the ids of the turn's earlier steps, which this step's calls may not reuse. */
  constructor(
    private readonly generateId: (index: number) => string,
    takenIds: Iterable<string> = [],
  ) {
    this.usedIds = new Set(takenIds);
  }

  push(fragment: { index: number; id?: string; name?: string; argumentsDelta?: string }): AssemblerOutput[] {
    const out: AssemblerOutput[] = [];
    let buffer = this.buffers.get(fragment.index);
    if (!buffer) {
      const id = fragment.id && !this.usedIds.has(fragment.id) ? fragment.id : this.generateId(fragment.index);
      this.usedIds.add(id);
      buffer = { id, name: '', argumentsText: '', started: false };
      this.buffers.set(fragment.index, buffer);
    }
    if (fragment.name && !buffer.started) buffer.name += fragment.name;
    if (!buffer.started && buffer.name) {
      buffer.started = true;
      out.push({ type: 'start', toolCallId: buffer.id, toolName: buffer.name });
      if (buffer.argumentsText) out.push({ type: 'delta', toolCallId: buffer.id, argsTextDelta: buffer.argumentsText });
    }
    if (fragment.argumentsDelta) {
      buffer.argumentsText += fragment.argumentsDelta;
      if (buffer.started) out.push({ type: 'delta', toolCallId: buffer.id, argsTextDelta: fragment.argumentsDelta });
    }
    return out;
  }

  /** The in-flight buffers, for `GET /v1/turns/:id` and late subscribers. */
  snapshot(): { toolCallId: string; toolName: string; argumentsText: string }[] {
    return this.calls().map((call) => ({ toolCallId: call.id, toolName: call.function.name, argumentsText: call.function.arguments }));
  }

  /** The calls in index order, as the assistant message's `tool_calls`. */
  calls(): AssistantToolCall[] {
    return [...this.buffers.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, buffer]) => ({ id: buffer.id, type: 'function', function: { name: buffer.name, arguments: buffer.argumentsText } }));
  }

  get size(): number {
    return this.buffers.size;
  }
}

import type { AssistantToolCall } from '../providers/model-provider';

/** What the assembler tells the caller to announce, in stream order. */
export type AssemblerOutput = { type: 'start'; toolCallId: string; toolName: string } | { type: 'delta'; toolCallId: string; argsTextDelta: string };

interface Buffer {
  /** The first id the provider sent for the call. */
  providerId?: string;
  /** Set when the call is announced (`start`); its id cannot change after that. */
  id?: string;
  name: string;
  argumentsText: string;
}

/**
 * Puts streamed tool-call fragments together by their index, whatever the provider does:
 * id and name only on the first fragment (OpenAI) or with the first arguments (vLLM, Groq),
 * a name split over several fragments, an id after the name, arguments split anywhere, calls
 * interleaved. A call is announced once its arguments begin (its name is whole by then) or,
 * if it has none, when the stream finishes. A call with no id gets one from `generateId`,
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
    let buffer = this.buffers.get(fragment.index);
    if (!buffer) {
      buffer = { name: '', argumentsText: '' };
      this.buffers.set(fragment.index, buffer);
    }
    if (fragment.id && buffer.providerId === undefined) buffer.providerId = fragment.id;
    if (buffer.id !== undefined) {
      // Announced: only arguments go on (a name fragment now would be a provider's noise).
      if (!fragment.argumentsDelta) return [];
      buffer.argumentsText += fragment.argumentsDelta;
      return [{ type: 'delta', toolCallId: buffer.id, argsTextDelta: fragment.argumentsDelta }];
    }
    if (fragment.name) buffer.name += fragment.name;
    if (fragment.argumentsDelta) buffer.argumentsText += fragment.argumentsDelta;
    return buffer.name && buffer.argumentsText ? this.announce(fragment.index, buffer) : [];
  }

  /** At the end of the stream: announces the calls that never had arguments. */
  finish(): AssemblerOutput[] {
    return this.indexOrder()
      .filter(([, buffer]) => buffer.id === undefined)
      .flatMap(([index, buffer]) => this.announce(index, buffer));
  }

  private announce(index: number, buffer: Buffer): AssemblerOutput[] {
    const id = buffer.providerId && !this.usedIds.has(buffer.providerId) ? buffer.providerId : this.generateId(index);
    this.usedIds.add(id);
    buffer.id = id;
    const out: AssemblerOutput[] = [{ type: 'start', toolCallId: id, toolName: buffer.name }];
    if (buffer.argumentsText) out.push({ type: 'delta', toolCallId: id, argsTextDelta: buffer.argumentsText });
    return out;
  }

  private indexOrder(): [number, Buffer][] {
    return [...this.buffers.entries()].sort(([a], [b]) => a - b);
  }

  /** The announced calls' buffers, for `GET /v1/turns/:id` and late subscribers. */
  snapshot(): { toolCallId: string; toolName: string; argumentsText: string }[] {
    return this.indexOrder()
      .filter(([, buffer]) => buffer.id !== undefined)
      .map(([, buffer]) => ({ toolCallId: buffer.id!, toolName: buffer.name, argumentsText: buffer.argumentsText }));
  }

  /** The calls in index order, as the assistant message's `tool_calls`; after {@link finish}. */
  calls(): AssistantToolCall[] {
    return this.indexOrder().map(([, buffer]) => ({ id: buffer.id ?? '', type: 'function', function: { name: buffer.name, arguments: buffer.argumentsText } }));
  }

  get size(): number {
    return this.buffers.size;
  }
}

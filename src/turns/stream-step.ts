import { errorMessage } from '../errors/switchyard-error';
import type { Usage } from '../events/event';
import type { AssistantToolCall, CompletionRequest, ModelProvider } from '../providers/model-provider';
import { ProviderError } from '../providers/provider-error';
import { ToolCallAssembler, type AssemblerOutput } from './tool-call-assembler';
import type { TurnEvents } from '../event-log/turn-events';

export interface StepOutput {
  text: string;
  reasoning: string;
  toolCalls: AssistantToolCall[];
  finishReason: string;
  usage: Usage;
  /** What the provider says answered, when it says (for traces). */
  responseModel?: string;
  responseId?: string;
}

/** Output pieces received from the provider (about a token each), counted for metrics. */
export interface StreamedPieces {
  text: number;
  reasoning: number;
  toolCall: number;
}

export type StepStreamResult =
  | { ok: true; output: StepOutput; streamed: StreamedPieces }
  /** `outputSent`: clients saw part of this step, so a retry must announce `attempt-discarded`. */
  | { ok: false; error: ProviderError; outputSent: boolean; streamed: StreamedPieces };

export interface StreamStepOptions {
  provider: ModelProvider;
  request: CompletionRequest;
  events: TurnEvents;
  signal: AbortSignal;
  generateToolCallId: (index: number) => string;
  /** Ids of the turn's earlier tool calls: a provider id among them is replaced by a generated one. */
  takenToolCallIds?: Iterable<string>;
  /**
   * Called on every piece of output; when a tool-call fragment arrived, with a reader of the
   * in-flight tool-call buffers, called only when the callee (which throttles) writes them.
   */
  onOutput?: (readToolCalls?: () => ReturnType<ToolCallAssembler['snapshot']>) => void;
  /** Every piece of text the provider streamed (text, reasoning, tool-call arguments), for a count of a call cut before its usage. */
  onDelta?: (delta: string) => void;
}

/** Streams one completion, relaying its output as events and assembling the step's message. */
export async function streamStep(options: StreamStepOptions): Promise<StepStreamResult> {
  const { events } = options;
  const assembler = new ToolCallAssembler(options.generateToolCallId, options.takenToolCallIds);
  const readToolCalls = () => assembler.snapshot();
  let text = '';
  let reasoning = '';
  let outputSent = false;
  // Integers per piece; the caller adds them to its counters once, at the step's end.
  const streamed: StreamedPieces = { text: 0, reasoning: 0, toolCall: 0 };
  const announce = (outputs: AssemblerOutput[]) => {
    for (const out of outputs) {
      outputSent = true;
      if (out.type === 'start') events.emit({ type: 'tool-call-start', toolCallId: out.toolCallId, toolName: out.toolName });
      else events.emit({ type: 'tool-call-delta', toolCallId: out.toolCallId, argsTextDelta: out.argsTextDelta });
    }
  };
  const relayDelta = (event: { type: 'text-delta' | 'reasoning-delta'; delta: string }) => {
    outputSent = true;
    options.onOutput?.();
    events.emit(event);
  };
  try {
    for await (const chunk of options.provider.stream(options.request, options.signal)) {
      switch (chunk.type) {
        case 'text':
          text += chunk.delta;
          streamed.text++;
          options.onDelta?.(chunk.delta);
          relayDelta({ type: 'text-delta', delta: chunk.delta });
          break;
        case 'reasoning':
          reasoning += chunk.delta;
          streamed.reasoning++;
          options.onDelta?.(chunk.delta);
          relayDelta({ type: 'reasoning-delta', delta: chunk.delta });
          break;
        case 'tool-call-fragment':
          streamed.toolCall++;
          options.onDelta?.((chunk.name ?? '') + (chunk.argumentsDelta ?? ''));
          announce(assembler.push(chunk));
          options.onOutput?.(readToolCalls);
          break;
        case 'finish':
          announce(assembler.finish());
          return {
            ok: true,
            output: {
              text,
              reasoning,
              toolCalls: assembler.calls(),
              finishReason: chunk.finishReason,
              usage: chunk.usage,
              ...(chunk.model ? { responseModel: chunk.model } : {}),
              ...(chunk.id ? { responseId: chunk.id } : {}),
            },
            streamed,
          };
      }
    }
    return { ok: false, error: new ProviderError('truncated', 'the provider stream ended without finishing'), outputSent, streamed };
  } catch (error) {
    const providerError = ProviderError.isInstance(error) ? error : new ProviderError('stream_error', errorMessage(error));
    return { ok: false, error: providerError, outputSent, streamed };
  }
}

/**
 * The Responses API's output items and events that Switchyard sends, written out as OpenAI's
 * reference (the `openai` package's `ResponseOutputItem`, `ResponseStreamEvent`) shapes them, so
 * that the server does not import the SDK.
 */

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: [];
  logprobs: [];
}

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export type OutputItem =
  | { type: 'message'; id: string; status: ItemStatus; role: 'assistant'; content: OutputText[] }
  | { type: 'function_call'; id: string; call_id: string; name: string; arguments: string; status: ItemStatus }
  | { type: 'function_call_output'; id: string; call_id: string; output: string; status: ItemStatus };

export const outputText = (text: string): OutputText => ({ type: 'output_text', text, annotations: [], logprobs: [] });

/** Item ids, the same in a stream and in the stored response: a step's message, a call, its output. */
export const itemIds = {
  message: (turnId: string, step: number, nth = 0) => `msg_${turnKey(turnId)}_${step}${nth > 0 ? `_${nth}` : ''}`,
  functionCall: (toolCallId: string) => `fc_${toolCallId}`,
  functionCallOutput: (toolCallId: string) => `fco_${toolCallId}`,
};

/** A turn id without its `turn_` prefix and dashes: the part item ids carry. */
function turnKey(turnId: string): string {
  return turnId.replace(/^turn_/, '').replace(/-/g, '');
}

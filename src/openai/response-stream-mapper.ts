import type { SwitchyardEvent } from '../events/event';
import { toolMessageContent } from '../store/tool-calls-repository';
import { itemIds, outputText, type OutputItem } from './response-items';
import type { ResponseObject, ResponseStatus } from './response-object';

/** One event of a Responses API stream, before its `sequence_number`. */
export type ResponseEventBody = { type: string } & Record<string, unknown>;
/** One event of a Responses API stream. */
export type ResponseStreamEvent = ResponseEventBody & { sequence_number: number };

export interface ResponseStreamMapper {
  /** `response.created` and `response.queued`: every stream of the response starts with them. */
  start(): ResponseStreamEvent[];
  /** The stream events of one of the turn's events, in seq order; `ended` once the turn ended. */
  map(event: SwitchyardEvent): { events: ResponseStreamEvent[]; ended: boolean };
  /**
   * The event that ends the stream, numbered next, carrying the response as stored:
   * `response.completed`, `response.failed`, or `response.incomplete` (cut short, or cancelled).
   */
  finish(response: ResponseObject): ResponseStreamEvent;
  /**
   * The same event for a turn whose events the log no longer keeps whole, after only `start()`:
   * what came between cannot be numbered as it was, so it is numbered after both the opening
   * events and the reader's `startingAfter`, and a resume gets the whole response, not a gap.
   */
  finishUnmapped(response: ResponseObject, startingAfter: number): ResponseStreamEvent;
}

interface OpenItem {
  item: OutputItem;
  outputIndex: number;
  /** A message's text or a call's arguments so far. */
  text: string;
  done: boolean;
}

/**
 * Maps one turn's events, in seq order, to the Responses API's stream events, numbering them
 * from 0 (docs/API.md, "OpenAI-compatible routes"). Pure and deterministic: every reader of the
 * response (the first, a resume with `starting_after`, another API process after a worker died)
 * computes the same events with the same numbers from the same log, so a resume skips exactly
 * what its reader had.
 *
 * A step restarted after it had streamed (`attempt-discarded`) cannot take back what was sent:
 * each item that step opened is done again as `incomplete` and empty, so that a reader that
 * applies the events (as the SDK's accumulator does) holds only what the new attempt sends,
 * in items of their own, under ids of their own: the new attempt's messages go on with the
 * step's count, and a call whose id the provider gives again gets its item id with a suffix
 * (item ids are unique in a response, as readers key items by them). Text and calls are items
 * as they stream; the outputs of the calls run
 * here are `function_call_output` items once the step's calls have all settled, in call order,
 * as the stored response lists them. A cancel ends the step's message `incomplete` with the
 * text it had.
 */
export function createResponseStreamMapper(input: { turnId: string; shell: ResponseObject }): ResponseStreamMapper {
  let sequence = 0;
  let nextOutputIndex = 0;
  let inProgress = false;
  let step = 0;
  /** Message items of the current step so far, discarded attempts' too: the next one's id says how many. */
  let messagesInStep = 0;
  /** Every item id sent so far. */
  const itemIdsSent = new Set<string>();
  let message: OpenItem | null = null;
  const calls = new Map<string, OpenItem>();
  /** Every item of the current step, for a discard. */
  let stepItems: OpenItem[] = [];
  let serverCalls: string[] = [];
  const results = new Map<string, string>();

  const numbered = (bodies: ResponseEventBody[]): ResponseStreamEvent[] => bodies.map((body) => ({ ...body, sequence_number: sequence++ }));
  const snapshot = (status: ResponseStatus): ResponseObject => ({ ...input.shell, status });
  const unique = (id: string): string => {
    let fresh = id;
    for (let n = 1; itemIdsSent.has(fresh); n++) fresh = `${id}_${n}`;
    itemIdsSent.add(fresh);
    return fresh;
  };
  const add = (opened: OutputItem): { open: OpenItem; events: ResponseEventBody[] } => {
    const item = { ...opened, id: unique(opened.id) };
    const open: OpenItem = { item, outputIndex: nextOutputIndex++, text: '', done: false };
    stepItems.push(open);
    return { open, events: [{ type: 'response.output_item.added', output_index: open.outputIndex, item }] };
  };
  const itemDone = (open: OpenItem, item: OutputItem): ResponseEventBody => {
    open.done = true;
    open.item = item;
    return { type: 'response.output_item.done', output_index: open.outputIndex, item };
  };
  const textDone = (open: OpenItem, text: string, status: 'completed' | 'incomplete'): ResponseEventBody[] => {
    const at = { item_id: open.item.id, output_index: open.outputIndex, content_index: 0 };
    return [
      { type: 'response.output_text.done', ...at, text, logprobs: [] },
      { type: 'response.content_part.done', ...at, part: outputText(text) },
      itemDone(open, { type: 'message', id: open.item.id, status, role: 'assistant', content: [outputText(text)] }),
    ];
  };
  const closeMessage = (): ResponseEventBody[] => {
    if (!message) return [];
    const closing = textDone(message, message.text, 'completed');
    message = null;
    return closing;
  };
  /**
   * The current step's items, done again as incomplete: emptied (a discard: the new attempt
   * sends its own), or with the text they had (a cancel keeps it, as the stored response does).
   * Its calls never ran: they end empty either way.
   */
  const discardStep = (text: 'emptied' | 'kept' = 'emptied'): ResponseEventBody[] => {
    const events: ResponseEventBody[] = [];
    for (const open of stepItems) {
      if (open.item.type === 'message') {
        const shown = text === 'kept' ? open.text : '';
        if (!open.done) events.push(...textDone(open, shown, 'incomplete'));
        else events.push(itemDone(open, { ...open.item, status: 'incomplete', content: [outputText(shown)] }));
      } else if (open.item.type === 'function_call') {
        if (!open.done) events.push({ type: 'response.function_call_arguments.done', item_id: open.item.id, output_index: open.outputIndex, name: open.item.name, arguments: '' });
        events.push(itemDone(open, { ...open.item, arguments: '', status: 'incomplete' }));
      }
    }
    message = null;
    calls.clear();
    stepItems = [];
    return events;
  };
  const openMessage = (): ResponseEventBody[] => {
    const added = add({ type: 'message', id: itemIds.message(input.turnId, step, messagesInStep++), status: 'in_progress', role: 'assistant', content: [] });
    message = added.open;
    return [...added.events, { type: 'response.content_part.added', item_id: added.open.item.id, output_index: added.open.outputIndex, content_index: 0, part: outputText('') }];
  };
  const go = (bodies: ResponseEventBody[]) => ({ events: numbered(bodies), ended: false });
  const stop = (bodies: ResponseEventBody[]) => ({ events: numbered(bodies), ended: true });

  return {
    start: () =>
      numbered([
        { type: 'response.created', response: snapshot('queued') },
        { type: 'response.queued', response: snapshot('queued') },
      ]),
    finish: (response) => ({ type: terminalType(response.status), response, sequence_number: sequence++ }),
    finishUnmapped: (response, startingAfter) => ({ type: terminalType(response.status), response, sequence_number: Math.max(sequence, startingAfter + 1) }),
    map(event) {
      switch (event.type) {
        case 'turn-start':
          if (inProgress) return go([]);
          inProgress = true;
          return go([{ type: 'response.in_progress', response: snapshot('in_progress') }]);
        case 'step-start':
          // The same step again is a restarted attempt's: its messages follow the discarded ones.
          if (event.step !== step) messagesInStep = 0;
          step = event.step;
          stepItems = [];
          return go(closeMessage());
        case 'text-delta': {
          const opening = message ? [] : openMessage();
          message!.text += event.delta;
          return go([
            ...opening,
            { type: 'response.output_text.delta', item_id: message!.item.id, output_index: message!.outputIndex, content_index: 0, delta: event.delta, logprobs: [] },
          ]);
        }
        case 'tool-call-start': {
          const closing = closeMessage();
          const added = add({
            type: 'function_call',
            id: itemIds.functionCall(event.toolCallId),
            call_id: event.toolCallId,
            name: event.toolName,
            arguments: '',
            status: 'in_progress',
          });
          calls.set(event.toolCallId, added.open);
          return go([...closing, ...added.events]);
        }
        case 'tool-call-delta': {
          const open = calls.get(event.toolCallId);
          if (!open) return go([]);
          open.text += event.argsTextDelta;
          return go([{ type: 'response.function_call_arguments.delta', item_id: open.item.id, output_index: open.outputIndex, delta: event.argsTextDelta }]);
        }
        case 'tool-call-end': {
          const open = calls.get(event.toolCallId);
          if (!open || open.item.type !== 'function_call') return go([]);
          calls.delete(event.toolCallId);
          const { item } = open;
          return go([
            { type: 'response.function_call_arguments.done', item_id: item.id, output_index: open.outputIndex, name: item.name, arguments: open.text },
            itemDone(open, { ...item, arguments: open.text, status: 'completed' }),
          ]);
        }
        case 'tool_processing_start':
          serverCalls = event.toolCalls.map((call) => call.toolCallId);
          return go([]);
        case 'tool-result':
          results.set(event.toolCallId, toolMessageContent(event.error ? { status: 'failed', error: event.error } : { status: 'succeeded', result: event.result }));
          return go([]);
        case 'tool_processing_complete': {
          const bodies: ResponseEventBody[] = [];
          for (const toolCallId of serverCalls) {
            const added = add({
              type: 'function_call_output',
              id: itemIds.functionCallOutput(toolCallId),
              call_id: toolCallId,
              output: results.get(toolCallId) ?? '',
              status: 'completed',
            });
            bodies.push(...added.events, itemDone(added.open, added.open.item));
            stepItems.pop();
          }
          serverCalls = [];
          return go(bodies);
        }
        case 'step-finish': {
          const closing = closeMessage();
          // Committed: no later discard or cancel takes this step's items back.
          stepItems = [];
          return go(closing);
        }
        case 'attempt-discarded':
          return go(discardStep());
        case 'turn-finish':
          return stop(closeMessage());
        case 'turn-error':
          return stop(discardStep());
        case 'turn-cancelled':
          // The cancel stored what the step streamed as an incomplete message; its calls, never run, go.
          return stop(discardStep('kept'));
        case 'reasoning-delta':
        case 'tool-call-request':
        case 'tool-approval-request':
        case 'tool-approval-response':
        case 'turn-waiting':
        case 'provider-retry':
        // The Responses stream has no event for a change of provider: its discard is what a reader sees.
        case 'provider-fallback':
        // A summary of the conversation's start is no part of the response.
        case 'compaction-start':
        case 'compaction-finish':
          return go([]);
      }
    },
  };
}

function terminalType(status: ResponseStatus): string {
  if (status === 'completed') return 'response.completed';
  if (status === 'failed') return 'response.failed';
  return 'response.incomplete';
}

import type { SwitchyardEvent } from '../../../src/events/event';
import { createResponseStreamMapper, type ResponseStreamEvent } from '../../../src/openai/response-stream-mapper';
import type { ResponseObject } from '../../../src/openai/response-object';

const TURN = 'turn_1';
let seq = 0;
const event = (body: Record<string, unknown>): SwitchyardEvent => ({ conversationId: 'conv_1', turnId: TURN, seq: ++seq, ...body }) as SwitchyardEvent;
const shell = { id: 'resp_1', object: 'response', status: 'queued', output: [] } as unknown as ResponseObject;

/** Maps a turn's events as a reader would receive them, from the start. */
function mapAll(events: SwitchyardEvent[]): ResponseStreamEvent[] {
  const mapper = createResponseStreamMapper({ turnId: TURN, shell });
  const out = mapper.start();
  for (const each of events) out.push(...mapper.map(each).events);
  return out;
}

/** The output items as a reader applying `output_item.added` / `.done` holds them. */
function itemsApplied(events: ResponseStreamEvent[]): any[] {
  const items: any[] = [];
  for (const each of events) {
    if (each.type === 'response.output_item.added') items.push(each.item);
    if (each.type === 'response.output_item.done') items[each.output_index as number] = each.item;
  }
  return items;
}

describe('the Responses stream of a turn', () => {
  beforeEach(() => (seq = 0));

  it('numbers every event from 0 and gives the same events to every reader of the same log', () => {
    const log = [
      event({ type: 'turn-start', attempt: 1 }),
      event({ type: 'step-start', step: 1 }),
      event({ type: 'text-delta', delta: 'Hel' }),
      event({ type: 'text-delta', delta: 'lo' }),
      event({ type: 'step-finish', step: 1, finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 } }),
    ];
    const first = mapAll(log);
    expect(first.map((each) => each.sequence_number)).toEqual(first.map((_, index) => index));
    expect(first.map((each) => each.type)).toEqual([
      'response.created',
      'response.queued',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
    ]);
    expect(mapAll(log)).toEqual(first);
    expect(itemsApplied(first)).toEqual([expect.objectContaining({ type: 'message', status: 'completed', content: [expect.objectContaining({ text: 'Hello' })] })]);
  });

  it('takes back a discarded attempt: its items are done again, incomplete and empty; the new attempt streams in items of its own', () => {
    const events = mapAll([
      event({ type: 'turn-start', attempt: 1 }),
      event({ type: 'step-start', step: 1 }),
      event({ type: 'text-delta', delta: 'dead attempt' }),
      event({ type: 'tool-call-start', toolCallId: 'call_0', toolName: 'f' }),
      event({ type: 'tool-call-delta', toolCallId: 'call_0', argsTextDelta: '{"a":' }),
      event({ type: 'turn-start', attempt: 2 }),
      event({ type: 'attempt-discarded', attempt: 1, step: 1 }),
      event({ type: 'step-start', step: 1 }),
      event({ type: 'text-delta', delta: 'the answer' }),
      // The provider names the new attempt's call as it named the dead one's.
      event({ type: 'tool-call-start', toolCallId: 'call_0', toolName: 'f' }),
      event({ type: 'tool-call-delta', toolCallId: 'call_0', argsTextDelta: '{}' }),
      event({ type: 'tool-call-end', toolCallId: 'call_0', args: {} }),
      event({ type: 'step-finish', step: 1, finishReason: 'tool_calls', usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 } }),
    ]);
    expect(events.filter((each) => each.type === 'response.in_progress')).toHaveLength(1);
    const items = itemsApplied(events);
    expect(items).toEqual([
      expect.objectContaining({ type: 'message', status: 'incomplete', content: [expect.objectContaining({ text: '' })] }),
      expect.objectContaining({ type: 'function_call', status: 'incomplete', arguments: '' }),
      expect.objectContaining({ type: 'message', status: 'completed', content: [expect.objectContaining({ text: 'the answer' })] }),
      expect.objectContaining({ type: 'function_call', status: 'completed', call_id: 'call_0', arguments: '{}' }),
    ]);
    // Item ids are unique in the response, and every event of an item names the item's own id.
    const ids = items.map((item) => item.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const each of events) {
      if ('item_id' in each) expect(each.item_id).toBe(items[each.output_index as number].id);
      if ('item' in each) expect((each.item as { id: string }).id).toBe(items[each.output_index as number].id);
    }
  });

  it('never takes back a committed step: a cancel after it keeps the text that came after, incomplete, and drops the unfinished call', () => {
    const mapper = createResponseStreamMapper({ turnId: TURN, shell });
    const out = mapper.start();
    for (const each of [
      event({ type: 'turn-start', attempt: 1 }),
      event({ type: 'step-start', step: 1 }),
      event({ type: 'tool-call-start', toolCallId: 'call_0', toolName: 'calculator' }),
      event({ type: 'tool-call-delta', toolCallId: 'call_0', argsTextDelta: '{}' }),
      event({ type: 'tool-call-end', toolCallId: 'call_0', args: {} }),
      event({ type: 'step-finish', step: 1, finishReason: 'tool_calls', usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 } }),
      event({ type: 'tool_processing_start', toolCalls: [{ toolCallId: 'call_0', toolName: 'calculator', args: {} }] }),
      event({ type: 'tool-result', toolCallId: 'call_0', result: { value: 1 }, attempts: 1, durationMs: 1 }),
      event({ type: 'tool_processing_complete', results: 1, failed: 0 }),
      event({ type: 'step-start', step: 2 }),
      event({ type: 'text-delta', delta: 'partial' }),
      event({ type: 'tool-call-start', toolCallId: 'call_1', toolName: 'calculator' }),
      event({ type: 'tool-call-delta', toolCallId: 'call_1', argsTextDelta: '{"expr' }),
    ]) {
      out.push(...mapper.map(each).events);
    }
    const cancelled = mapper.map(event({ type: 'turn-cancelled' }));
    expect(cancelled.ended).toBe(true);
    const items = itemsApplied([...out, ...cancelled.events]);
    expect(items).toEqual([
      expect.objectContaining({ type: 'function_call', status: 'completed', arguments: '{}' }),
      expect.objectContaining({ type: 'function_call_output', call_id: 'call_0', output: JSON.stringify({ value: 1 }) }),
      expect.objectContaining({ type: 'message', status: 'incomplete', content: [expect.objectContaining({ text: 'partial' })] }),
      expect.objectContaining({ type: 'function_call', call_id: 'call_1', status: 'incomplete', arguments: '' }),
    ]);
    const final = mapper.finish({ ...shell, status: 'cancelled' });
    expect(final).toMatchObject({ type: 'response.incomplete', sequence_number: cancelled.events.at(-1)!.sequence_number + 1 });
  });

  it("numbers the end of a turn it could not map after the opening events and the reader's starting_after", () => {
    const end = (startingAfter: number) => {
      const mapper = createResponseStreamMapper({ turnId: TURN, shell });
      mapper.start();
      return mapper.finishUnmapped({ ...shell, status: 'completed' }, startingAfter);
    };
    expect(end(-1)).toMatchObject({ type: 'response.completed', sequence_number: 2, response: { status: 'completed' } });
    expect(end(1)).toMatchObject({ sequence_number: 2 });
    expect(end(40)).toMatchObject({ sequence_number: 41 });
    expect(createResponseStreamMapper({ turnId: TURN, shell }).finishUnmapped({ ...shell, status: 'failed' }, 7)).toMatchObject({ type: 'response.failed', sequence_number: 8 });
  });
});

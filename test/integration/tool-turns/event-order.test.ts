import { startToolHttpServer, type ToolHttpServer } from '../../support/tool-servers';
import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';

/** Coarse phases of a turn's events: each run of one kind collapsed into one entry. */
function phases(events: any[]): string[] {
  const labels = events.map((event) => {
    if (event.type.startsWith('tool-call-') && event.type !== 'tool-call-request') return 'tool-call-*';
    return ['step-start', 'step-finish'].includes(event.type) ? `${event.type} ${event.step}` : event.type;
  });
  return labels.filter((label, index) => label !== labels[index - 1]);
}

/** The event order of API.md, as a subscribed client sees it. */
describe('the event order of a tool step', () => {
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    server = await startToolHttpServer();
    server.route('/weather', (request) => ({ delayMs: 50, body: { city: (request.body as { city: string }).city, celsius: 21 } }));
    harness = await startToolTurnHarness({
      toolFiles: {
        'tools.json': [
          { name: 'weather', description: 'Weather', url: `${server.url}/weather`, timeoutMs: 800, retries: 0, fields: [{ name: 'city', required: true }] },
          { kind: 'client', name: 'confirm', description: 'Asks the user', timeoutMs: 20_000 },
        ],
      },
    });
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  it('goes tool-call-* → step-finish → tool_processing_start → tool-result per call → tool_processing_complete → step-start, seqs consecutive', async () => {
    const calls = [
      { name: 'weather', arguments: { city: 'Paris' } },
      { name: 'calculator', arguments: { expression: '1+2' } },
      { name: 'weather', arguments: { town: 'Lyon' } },
    ];
    const run = await harness.runTurn({ steps: [{ text: 'Let me check.', toolCalls: calls, interleave: true, argumentChunkChars: 4 }, { text: 'Sunny.' }] });
    const { events } = run;
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
    expect(phases(events)).toEqual([
      'turn-start',
      'step-start 1',
      'text-delta',
      'tool-call-*',
      'step-finish 1',
      'tool_processing_start',
      'tool-result',
      'tool_processing_complete',
      'step-start 2',
      'text-delta',
      'step-finish 2',
      'turn-finish',
    ]);

    // Each call: its start, then its deltas, then its end.
    const ends = eventsOfType(events, 'tool-call-end');
    expect(ends).toHaveLength(3);
    for (const end of ends) {
      const own = events.filter((event) => event.toolCallId === end.toolCallId && event.type.startsWith('tool-call-'));
      expect(own[0].type).toBe('tool-call-start');
      expect(own.at(-1)).toBe(end);
      expect(own.slice(1, -1).every((event) => event.type === 'tool-call-delta')).toBe(true);
    }
    const ids = ends.map((end) => end.toolCallId);
    expect(eventsOfType(events, 'tool_processing_start')[0].toolCalls).toEqual([
      { toolCallId: ids[0], toolName: 'weather', args: { city: 'Paris' } },
      { toolCallId: ids[1], toolName: 'calculator', args: { expression: '1+2' } },
      { toolCallId: ids[2], toolName: 'weather', args: null },
    ]);
    const results = eventsOfType(events, 'tool-result');
    expect(results.map((event) => event.toolCallId).sort()).toEqual([...ids].sort());
    expect(results.find((event) => event.toolCallId === ids[2])).toMatchObject({ error: { code: 'invalid_arguments' }, attempts: 0, durationMs: 0 });
    expect(eventsOfType(events, 'tool_processing_complete')[0]).toMatchObject({ results: 3, failed: 1 });
    expect(eventsOfType(events, 'step-finish')[0]).toMatchObject({ finishReason: 'tool_calls', usage: { completionTokens: expect.any(Number) } });

    // The SSE route replays the same events in the same order.
    const sse = await fetch(`${harness.stack.url}/v1/turns/${run.turnId}/events`, { headers: { authorization: `Bearer ${harness.apiKey}` } });
    const replayed = [...(await sse.text()).matchAll(/^data: (.*)$/gm)].map((match) => JSON.parse(match[1]!));
    expect(replayed.map((event) => [event.seq, event.type])).toEqual(events.map((event) => [event.seq, event.type]));
  });

  it('asks for a client tool after tool_processing_start and waits for it after the server tools settled', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId } = await harness.postTurn(conversationId, {
      steps: [
        {
          toolCalls: [
            { name: 'weather', arguments: { city: 'Oslo' } },
            { name: 'confirm', arguments: {} },
          ],
        },
        { text: 'done' },
      ],
    });
    const waiting = (await client.waitFor((frame) => frame.type === 'event' && frame.event.type === 'turn-waiting')).event;
    const [, confirmId] = eventsOfType(client.events(), 'tool-call-end').map((event) => event.toolCallId);
    expect(waiting.toolCallIds).toEqual([confirmId]);
    client.send({ type: 'tool-result', turnId, toolCallId: confirmId, result: 'ok' });

    const events = await client.waitForTurnEnd(turnId);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
    const types = events.map((event) => event.type).filter((type) => !type.startsWith('tool-call-') || type === 'tool-call-request');
    expect(types.filter((type) => type !== 'text-delta')).toEqual([
      'turn-start',
      'step-start',
      'step-finish',
      'tool_processing_start',
      'tool-call-request',
      'tool-result',
      'turn-waiting',
      'tool-result',
      'tool_processing_complete',
      'step-start',
      'step-finish',
      'turn-finish',
    ]);
    const results = eventsOfType(events, 'tool-result');
    expect(results.map((event) => event.toolCallId)).toEqual([eventsOfType(events, 'tool-call-end')[0].toolCallId, confirmId]);
    expect(eventsOfType(events, 'tool_processing_complete')[0]).toMatchObject({ results: 2, failed: 0 });
  });
});

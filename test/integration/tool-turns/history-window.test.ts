import { startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';

/**
 * `maxHistoryMessages` (and MAX_HISTORY_MESSAGES, its default) bounds the stored messages a turn
 * sends: the most recent, from a user message on, and always all of the turn's own.
 */
describe('a bounded history', () => {
  let harness: ToolTurnHarness;
  const calculate = { toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] };

  beforeAll(async () => {
    harness = await startToolTurnHarness({ env: { MAX_HISTORY_MESSAGES: '4' } });
  });
  afterAll(() => harness.close());

  /** Each request of a turn as its messages: roles, with the user messages' markers. */
  async function sent(conversationId: string, scenario: unknown, body?: Record<string, unknown>) {
    const run = await harness.runTurn(scenario, { conversationId, ...(body ? { body } : {}) });
    expect(run.events.at(-1).type).toBe('turn-finish');
    return {
      marker: run.marker,
      requests: harness
        .providerRequests(run.marker)
        .map((request) => request.messages.map((message: any) => (message.role === 'user' ? `user:${String(message.content).split(' ')[0]}` : message.role))),
    };
  }

  it('sends the most recent messages from a user message on, never a tool message without its call, and never less than the turn itself', async () => {
    const conversationId = await harness.newConversation();
    const first = await sent(conversationId, { text: 'one' });
    expect(first.requests).toEqual([[`user:${first.marker}`]]);
    const second = await sent(conversationId, { steps: [calculate, { text: 'two' }] });
    expect(second.requests).toEqual([
      [`user:${first.marker}`, 'assistant', `user:${second.marker}`],
      // The last four begin with the first turn's answer: the window starts at the next user message.
      [`user:${second.marker}`, 'assistant', 'tool'],
    ]);
    // Its own turn is five messages long by its second step: all of them go, past the bound of four.
    const third = await sent(conversationId, { steps: [calculate, calculate, { text: 'three' }] });
    expect(third.requests).toEqual([[`user:${third.marker}`], [`user:${third.marker}`, 'assistant', 'tool'], [`user:${third.marker}`, 'assistant', 'tool', 'assistant', 'tool']]);
    // The turn's own bound wins over the default; the last eight messages start with the second turn's answer.
    const fourth = await sent(conversationId, { text: 'four' }, { maxHistoryMessages: 8 });
    expect(fourth.requests).toEqual([[`user:${third.marker}`, 'assistant', 'tool', 'assistant', 'tool', 'assistant', `user:${fourth.marker}`]]);
    const whole = await sent(conversationId, { text: 'five' }, { maxHistoryMessages: 100 });
    expect(whole.requests[0]).toHaveLength(1 + 2 + 4 + 6 + 2);
  });

  it('refuses a bound that is not a positive whole number with 400', async () => {
    const conversationId = await harness.newConversation();
    for (const bad of [0, -1, 2.5, 'ten', 100_001]) {
      const posted = await harness.api.post(`/v1/conversations/${conversationId}/turns`, { content: 'hi', maxHistoryMessages: bad });
      expect(posted.status).toBe(400);
      expect(posted.body.error).toMatchObject({ code: 'invalid_request', details: [expect.objectContaining({ field: 'maxHistoryMessages' })] });
    }
  });
});

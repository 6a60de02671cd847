import type { SwitchyardEvent } from '../../../src/events/event';
import { ConversationFeed, type ToolCallRequest } from '../../../packages/client/src/conversation-feed';
import { openClientCalls, turnsToCheck, type TurnToolCalls } from '../../../packages/client/src/open-client-calls';

const base = { conversationId: 'c1', turnId: 't1' };
const request = (seq: number, toolCallId: string): ToolCallRequest => ({ ...base, seq, type: 'tool-call-request', toolCallId, toolName: 'ask_user', args: {} });
const event = (seq: number, body: Record<string, unknown>) => ({ ...base, seq, ...body }) as SwitchyardEvent;

describe('a conversation feed reloaded over HTTP', () => {
  it('keeps the client-tool requests the server shows unanswered, and runs each once', () => {
    const feed = new ConversationFeed(undefined);
    // Subscribed while the conversation stood at seq 10: the request is part of the replay, not run yet.
    feed.subscribed(10);
    expect(feed.accept(request(4, 'call_a'))).toBe('deliver');
    expect(feed.accept(request(5, 'call_b'))).toBe('deliver');
    expect(feed.takeRunnable()).toEqual([]);

    // The rest of the replay is gone (cursor_expired): the server says call_a is still open.
    feed.reloaded(20, [request(4, 'call_a')]);
    feed.subscribed(20);
    expect(feed.lastSeq).toBe(20);
    expect(feed.takeRunnable().map((each) => each.toolCallId)).toEqual(['call_a']);
    expect(feed.takeRunnable()).toEqual([]);

    // Reloaded again with it still open: it ran already, so it is not run again.
    feed.reloaded(25, [request(4, 'call_a'), request(25, 'call_c')]);
    expect(feed.takeRunnable().map((each) => each.toolCallId)).toEqual(['call_c']);
    expect(feed.accept(event(26, { type: 'tool-result', toolCallId: 'call_a', result: 1, attempts: 1, durationMs: 1 }))).toBe('deliver');
    expect(feed.openRequests().map((each) => each.toolCallId)).toEqual(['call_c']);
  });
});

describe('a conversation feed and call ids that come again', () => {
  it("runs a later turn's call_0 though an earlier turn's call_0 ran and was answered", () => {
    const feed = new ConversationFeed(undefined);
    feed.subscribed(0);
    expect(feed.accept(request(1, 'call_0'))).toBe('deliver');
    expect(feed.takeRunnable().map((each) => [each.turnId, each.toolCallId])).toEqual([['t1', 'call_0']]);
    feed.accept(event(2, { type: 'tool-result', toolCallId: 'call_0', result: 1, attempts: 1, durationMs: 1 }));

    const later: ToolCallRequest = { ...request(3, 'call_0'), turnId: 't2' };
    expect(feed.accept(later)).toBe('deliver');
    expect(feed.takeRunnable()).toEqual([later]);
    // An answer of the earlier turn's call_0 leaves the later one open.
    feed.accept(event(4, { type: 'tool-result', toolCallId: 'call_0', result: 1, attempts: 1, durationMs: 1 }));
    expect(feed.openRequests()).toEqual([later]);
  });

  it("keeps two turns' open call_0 apart after a reload", () => {
    const feed = new ConversationFeed(undefined);
    const other: ToolCallRequest = { ...request(5, 'call_0'), turnId: 't2' };
    feed.reloaded(5, [request(4, 'call_0'), other]);
    expect(feed.takeRunnable()).toEqual([request(4, 'call_0'), other]);
  });
});

describe('open client calls after a reload', () => {
  const turn: TurnToolCalls = {
    id: 't1',
    conversationId: 'c1',
    toolCalls: [
      { toolCallId: 'call_a', toolName: 'ask_user', kind: 'client', status: 'pending', args: { q: 1 } },
      { toolCallId: 'call_b', toolName: 'ask_user', kind: 'client', status: 'succeeded', args: {} },
      { toolCallId: 'call_c', toolName: 'calculator', kind: 'builtin', status: 'pending', args: {} },
      { toolCallId: 'call_d', toolName: 'ask_user', kind: 'client', status: 'pending', args: { q: 4 } },
    ],
  };

  it('are the unanswered client calls: a request seen before as it was, one never seen made from the turn', () => {
    expect(openClientCalls([turn], [request(4, 'call_a'), request(5, 'call_b')], 30)).toEqual([
      request(4, 'call_a'),
      { type: 'tool-call-request', seq: 30, conversationId: 'c1', turnId: 't1', toolCallId: 'call_d', toolName: 'ask_user', args: { q: 4 } },
    ]);
  });

  it('are looked for in the turns of the requests seen and in the latest turn', () => {
    expect(turnsToCheck([request(4, 'call_a')], [{ turnId: 't1' }, { turnId: 't2' }])).toEqual(['t1', 't2']);
    expect(turnsToCheck([], [])).toEqual([]);
    // Context given without a turn (a fork's copies) names none.
    expect(turnsToCheck([], [{ turnId: null }])).toEqual([]);
  });
});

describe('a conversation feed and approvals', () => {
  const approvalRequest = (seq: number, toolCallId: string) =>
    event(seq, { type: 'tool-approval-request', toolCallId, toolName: 'transfer', args: {}, approvalId: `appr_${toolCallId}`, expiresAt: '2030-01-01T00:00:00.000Z' });
  const listed = (toolCallId: string) => ({ ...base, toolCallId, toolName: 'transfer', args: {}, approvalId: `appr_${toolCallId}`, expiresAt: '2030-01-01T00:00:00.000Z' });

  it('shows each pending approval once, after the replay, and never one decided in it or decided before a list read earlier arrived', () => {
    const feed = new ConversationFeed(undefined);
    feed.subscribed(4);
    feed.accept(approvalRequest(1, 'call_a'));
    feed.accept(approvalRequest(2, 'call_b'));
    feed.accept(event(3, { type: 'tool-approval-response', toolCallId: 'call_b', approved: false }));
    expect(feed.takeUndecided()).toEqual([]);
    feed.accept(event(4, { type: 'text-delta', delta: '' }));
    expect(feed.takeUndecided().map((each) => each.toolCallId)).toEqual(['call_a']);
    // The pending list (read over HTTP) names call_a again and call_b, decided since: neither is shown.
    feed.addApprovals([listed('call_a'), listed('call_b'), listed('call_c')]);
    expect(feed.takeUndecided().map((each) => each.toolCallId)).toEqual(['call_c']);
    expect(feed.takeUndecided()).toEqual([]);
  });

  it('drops the approvals of a turn that ended, and after a reload keeps only those the server lists', () => {
    const feed = new ConversationFeed(undefined);
    feed.subscribed(0);
    feed.accept(approvalRequest(1, 'call_a'));
    feed.accept(event(2, { type: 'turn-cancelled' }));
    feed.addApprovals([listed('call_a')]);
    expect(feed.takeUndecided()).toEqual([]);

    feed.reloaded(10, [], [listed('call_d')]);
    expect(feed.takeUndecided().map((each) => each.toolCallId)).toEqual(['call_d']);
  });
});

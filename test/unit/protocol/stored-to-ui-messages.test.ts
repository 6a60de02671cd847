import { validateUIMessages, type UIMessage } from 'ai';
import { storedToUiMessages, type StoredMessage, type StoredToolCall, type StoredTurn } from '@switchyard/protocol';

const turn = (id: string, status: StoredTurn['status'], input: unknown = `asked in ${id}`): StoredTurn => ({ id, status, input });
const call = (overrides: Partial<StoredToolCall> & Pick<StoredToolCall, 'turnId' | 'toolCallId'>): StoredToolCall => ({
  step: 1,
  runsOnClient: false,
  status: 'succeeded',
  args: {},
  result: null,
  error: null,
  attempts: 1,
  durationMs: 12,
  ...overrides,
});
const requested = (id: string, name: string) => ({ id, function: { name, arguments: '{}' } });
const toolMessage = (turnId: string, toolCallId: string): StoredMessage => ({ role: 'tool', content: '{}', toolCallId, turnId });

describe('storedToUiMessages', () => {
  it('makes one assistant message per turn, as the live stream does: steps, text, server tools with their facts, tool processing, the status', async () => {
    const messages: StoredMessage[] = [
      { role: 'user', content: 'weather in two cities', turnId: 't1' },
      { role: 'assistant', content: 'Checking.', toolCalls: [requested('a', 'weather'), requested('b', 'weather')], turnId: 't1' },
      toolMessage('t1', 'a'),
      toolMessage('t1', 'b'),
      { role: 'assistant', content: 'Lisbon is 21.', turnId: 't1' },
    ];
    const toolCalls = [
      call({ turnId: 't1', toolCallId: 'a', args: { city: 'Lisbon' }, result: { tempC: 21 }, durationMs: 700 }),
      call({ turnId: 't1', toolCallId: 'b', args: { city: 'Porto' }, status: 'failed', error: { code: 'http_error', message: 'down' }, attempts: 3 }),
    ];
    const ui = storedToUiMessages({ messages, turns: [turn('t1', 'completed')], toolCalls });

    expect(ui).toEqual([
      { id: 't1:user', role: 'user', parts: [{ type: 'text', text: 'weather in two cities' }] },
      {
        id: 't1',
        role: 'assistant',
        metadata: { turnStatus: 'completed' },
        parts: [
          { type: 'step-start' },
          { type: 'text', text: 'Checking.', state: 'done' },
          {
            type: 'tool-weather',
            toolCallId: 'a',
            providerExecuted: true,
            state: 'output-available',
            input: { city: 'Lisbon' },
            output: { tempC: 21 },
            toolMetadata: { attempts: 1, durationMs: 700 },
          },
          {
            type: 'tool-weather',
            toolCallId: 'b',
            providerExecuted: true,
            state: 'output-error',
            input: { city: 'Porto' },
            errorText: 'http_error: down',
            toolMetadata: { attempts: 3, durationMs: 12 },
          },
          { type: 'data-tool-processing', id: 't1:1', data: { status: 'complete', step: 1, results: 2, failed: 1 } },
          { type: 'step-start' },
          { type: 'text', text: 'Lisbon is 21.', state: 'done' },
        ],
      },
    ]);
    // What the AI SDK itself accepts, and a UIMessage[] for TypeScript.
    const typed: UIMessage[] = ui;
    await expect(validateUIMessages({ messages: typed })).resolves.toHaveLength(2);
  });

  it('leaves a pending client call for the browser (input-available, not providerExecuted) while its step waits', async () => {
    const messages: StoredMessage[] = [
      { role: 'user', content: 'where am I', turnId: 't1' },
      { role: 'assistant', content: null, toolCalls: [requested('c', 'browser_timezone'), requested('d', 'calculator')], turnId: 't1' },
    ];
    const toolCalls = [
      call({ turnId: 't1', toolCallId: 'c', runsOnClient: true, status: 'pending', attempts: 0, durationMs: 0 }),
      call({ turnId: 't1', toolCallId: 'd', result: { result: 2 } }),
    ];
    const [, assistant] = storedToUiMessages({ messages, turns: [turn('t1', 'waiting_tools')], toolCalls });
    expect(assistant).toEqual({
      id: 't1',
      role: 'assistant',
      metadata: { turnStatus: 'waiting_tools' },
      parts: [
        { type: 'step-start' },
        { type: 'tool-browser_timezone', toolCallId: 'c', state: 'input-available', input: {} },
        {
          type: 'tool-calculator',
          toolCallId: 'd',
          providerExecuted: true,
          state: 'output-available',
          input: {},
          output: { result: 2 },
          toolMetadata: { attempts: 1, durationMs: 12 },
        },
        { type: 'data-tool-processing', id: 't1:1', data: { status: 'start', step: 1 } },
      ],
    });
    await expect(validateUIMessages({ messages: [assistant!] })).resolves.toHaveLength(1);
  });

  it('shows a call refused before it ran as an error without input, as tool-input-error leaves it', () => {
    const messages: StoredMessage[] = [
      { role: 'user', content: 'hi', turnId: 't1' },
      { role: 'assistant', content: '', toolCalls: [requested('x', 'nope')], turnId: 't1' },
      toolMessage('t1', 'x'),
    ];
    const refused = call({
      turnId: 't1',
      toolCallId: 'x',
      args: null,
      status: 'failed',
      error: { code: 'invalid_arguments', message: 'unknown tool "nope"' },
      attempts: 0,
      durationMs: 0,
    });
    const [, assistant] = storedToUiMessages({ messages, turns: [turn('t1', 'completed')], toolCalls: [refused] });
    expect(assistant!.parts[1]).toEqual({
      type: 'tool-nope',
      toolCallId: 'x',
      providerExecuted: true,
      state: 'output-error',
      rawInput: null,
      errorText: 'invalid_arguments: unknown tool "nope"',
      toolMetadata: { attempts: 0, durationMs: 0 },
    });
  });

  it('keeps turns in their order, those that stored nothing yet (cancelled while queued, queued now) shown from their input, and context messages in place', async () => {
    const messages: StoredMessage[] = [
      { role: 'assistant', content: 'Context given with the batch item.', turnId: null },
      { role: 'user', content: 'first', turnId: 't1' },
      { role: 'assistant', content: 'one', turnId: 't1' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'third, with a picture' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
        turnId: 't3',
      },
    ];
    const turns = [
      turn('t1', 'completed'),
      turn('t2', 'cancelled', 'second, cancelled before it ran'),
      turn('t3', 'running'),
      turn('t4', 'queued', [{ type: 'image_url', image_url: { url: 'https://images.example/cat.jpg' } }]),
    ];
    const ui = storedToUiMessages({ messages, turns, toolCalls: [] });
    expect(ui.map((message) => [message.id, message.role, message.metadata?.turnStatus, message.parts])).toEqual([
      ['message-0', 'assistant', undefined, [{ type: 'text', text: 'Context given with the batch item.' }]],
      ['t1:user', 'user', undefined, [{ type: 'text', text: 'first' }]],
      ['t1', 'assistant', 'completed', [{ type: 'step-start' }, { type: 'text', text: 'one', state: 'done' }]],
      ['t2:user', 'user', undefined, [{ type: 'text', text: 'second, cancelled before it ran' }]],
      ['t2', 'assistant', 'cancelled', []],
      [
        't3:user',
        'user',
        undefined,
        [
          { type: 'text', text: 'third, with a picture' },
          { type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,AAAA' },
        ],
      ],
      ['t3', 'assistant', 'running', []],
      ['t4:user', 'user', undefined, [{ type: 'file', mediaType: 'image/*', url: 'https://images.example/cat.jpg' }]],
      ['t4', 'assistant', 'queued', []],
    ]);
    await expect(validateUIMessages({ messages: ui.filter((message) => message.parts.length > 0) })).resolves.toHaveLength(6);
  });

  it("shows the path: a regenerate answers the user message of the turn it replaced, an edit's turn replaces the turns after it", () => {
    const messages: StoredMessage[] = [
      { role: 'user', content: 'first', turnId: 't1' },
      { role: 'assistant', content: 'replaced answer', turnId: 't1', supersededBy: 'r1' },
      { role: 'assistant', content: 'new answer', turnId: 'r1' },
      { role: 'user', content: 'second', turnId: 't2', supersededBy: 'e1' },
      { role: 'assistant', content: 'second answer', turnId: 't2', supersededBy: 'e1' },
      { role: 'user', content: 'second, edited', turnId: 'e1' },
    ];
    const turns = [
      turn('t1', 'completed'),
      turn('r1', 'completed', null),
      { ...turn('t2', 'completed'), supersededBy: 'e1' },
      { ...turn('t3', 'cancelled'), supersededBy: 'e1' },
      turn('e1', 'running'),
      turn('r2', 'queued', null),
    ];
    expect(storedToUiMessages({ messages, turns, toolCalls: [] })).toEqual([
      { id: 't1:user', role: 'user', parts: [{ type: 'text', text: 'first' }] },
      { id: 'r1', role: 'assistant', metadata: { turnStatus: 'completed' }, parts: [{ type: 'step-start' }, { type: 'text', text: 'new answer', state: 'done' }] },
      { id: 'e1:user', role: 'user', parts: [{ type: 'text', text: 'second, edited' }] },
      // A regenerate queued behind it takes the place of its (empty) answer.
      { id: 'r2', role: 'assistant', metadata: { turnStatus: 'queued' }, parts: [] },
    ]);
  });

  it('makes nothing of an empty history', () => {
    expect(storedToUiMessages({ messages: [], turns: [], toolCalls: [] })).toEqual([]);
  });

  it('shows approvals as the live stream and addToolApprovalResponse leave them: requested, responded, denied, approved and run', async () => {
    const messages: StoredMessage[] = [
      { role: 'user', content: 'pay them', turnId: 't1' },
      { role: 'assistant', content: '', toolCalls: ['a', 'b', 'c', 'd', 'e'].map((id) => requested(id, 'transfer')), turnId: 't1' },
    ];
    const approval = (id: string, decision: { approved: boolean; reason: string | null } | null) => ({ id: `appr_${id}`, decision });
    const toolCalls = [
      call({ turnId: 't1', toolCallId: 'a', status: 'awaiting_approval', args: { to: 'a' }, approval: approval('a', null), attempts: 0 }),
      call({ turnId: 't1', toolCallId: 'b', status: 'pending', args: { to: 'b' }, approval: approval('b', { approved: true, reason: null }), attempts: 0 }),
      call({
        turnId: 't1',
        toolCallId: 'c',
        status: 'failed',
        args: { to: 'c' },
        error: { code: 'denied', message: 'no' },
        approval: approval('c', { approved: false, reason: 'no' }),
        attempts: 0,
      }),
      call({ turnId: 't1', toolCallId: 'd', status: 'succeeded', args: { to: 'd' }, result: { ok: true }, approval: approval('d', { approved: true, reason: 'fine' }) }),
      call({
        turnId: 't1',
        toolCallId: 'e',
        status: 'cancelled',
        args: { to: 'e' },
        error: { code: 'cancelled', message: 'the turn was cancelled' },
        approval: approval('e', null),
      }),
    ];
    const [, assistant] = storedToUiMessages({ messages, turns: [turn('t1', 'waiting_approval')], toolCalls });
    expect(assistant!.metadata).toEqual({ turnStatus: 'waiting_approval' });
    expect(assistant!.parts.filter((part) => part.type === 'tool-transfer').map((part: any) => [part.state, part.approval])).toEqual([
      ['approval-requested', { id: 'appr_a' }],
      ['approval-responded', { id: 'appr_b', approved: true }],
      ['output-denied', { id: 'appr_c', approved: false, reason: 'no' }],
      ['output-available', { id: 'appr_d', approved: true, reason: 'fine' }],
      ['output-error', undefined],
    ]);
    await expect(validateUIMessages({ messages: [assistant as UIMessage] })).resolves.toHaveLength(1);
  });
});

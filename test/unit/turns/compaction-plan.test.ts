import type { StoredMessage } from '../../../src/store/messages-repository';
import type { ChatMessage } from '../../../src/providers/model-provider';
import { compactionLimits, countCorrection, planStep, summaryRequest, tailStart, SUMMARY_TRANSCRIPT_TAG } from '../../../src/turns/compaction-plan';

let nextId = 1;
const message = (role: StoredMessage['role'], content: unknown, extra: Partial<StoredMessage> = {}): StoredMessage => ({
  id: `msg_${nextId++}`,
  role,
  content,
  turnId: 'turn_1',
  ...extra,
});
const call = (id: string) => ({ id, type: 'function' as const, function: { name: 'calculator', arguments: '{"expression":"1+1"}' } });
/** One token per character of content: what the cuts are counted in here. */
const chars = (messages: ChatMessage[]) => messages.reduce((total, each) => total + String(each.content ?? '').length + ('tool_calls' in each && each.tool_calls ? 10 : 0), 0);
const lengthOf = (each: StoredMessage) => chars([{ role: 'user', content: String(each.content ?? '') }]);

describe('where a compaction cuts', () => {
  it('keeps as many recent messages as keepRecentTokens allows, starting at a message that is not a tool result', () => {
    const path = [
      message('user', 'a'.repeat(50)),
      message('assistant', 'b'.repeat(50)),
      message('user', 'c'.repeat(10)),
      message('assistant', null, { toolCalls: [call('x')] }),
      message('tool', 'd'.repeat(10), { toolCallId: 'x' }),
      message('assistant', 'e'.repeat(10)),
      message('user', 'f'.repeat(5)),
    ];
    // 25 holds the tool exchange whole (its call counts 0 here); 20 holds the answer after it but not its tool message.
    expect(tailStart(path, 25, lengthOf)).toBe(3);
    expect(tailStart(path, 20, lengthOf)).toBe(5);
    expect(tailStart(path, 1000, lengthOf)).toBe(0);
  });

  it('never starts the tail inside a tool exchange, and always holds the last user message', () => {
    const path = [
      message('user', 'q'.repeat(40)),
      message('assistant', null, { toolCalls: [call('x'), call('y')] }),
      message('tool', 'r'.repeat(5), { toolCallId: 'x' }),
      message('tool', 'r'.repeat(5), { toolCallId: 'y' }),
      message('assistant', 'done'),
    ];
    // 4 (answer) + 5 + 5 fit in 15, the tool_calls message does not: the tail may not start at a tool message, so it starts at the user message.
    expect(tailStart(path, 15, lengthOf)).toBe(0);
    const later = [...path, message('user', 'next'), message('assistant', 'z'.repeat(100))];
    // The last user message is kept even when it and what follows exceed keepRecentTokens.
    expect(tailStart(later, 10, lengthOf)).toBe(5);
  });

  it('sends the request as it is under the trigger, and compacts past it', () => {
    const path = [message('user', 'a'.repeat(100)), message('assistant', 'b'.repeat(100)), message('user', 'now')];
    const limits = { triggerTokens: 250, keepRecentTokens: 10 };
    expect(planStep({ system: 'sys', summary: null, path: path.slice(0, 1), limits, countTokens: chars }).kind).toBe('send');
    const plan = planStep({
      system: 'sys',
      summary: null,
      path: [...path, message('assistant', 'c'.repeat(100))],
      limits: { triggerTokens: 200, keepRecentTokens: 10 },
      countTokens: chars,
    });
    expect(plan).toMatchObject({ kind: 'compact', upTo: path[1], tokensBefore: 306 });
    if (plan.kind === 'compact') expect(plan.tail.map((each) => each.content)).toEqual(['now', 'c'.repeat(100)]);
  });

  it('sends the system prompt with the summary, then only the messages after what it covers', () => {
    const path = [message('user', 'old'), message('assistant', 'older answer'), message('user', 'new')];
    const plan = planStep({
      system: 'Be brief.',
      summary: { summary: 'They said old.', upToRowId: path[1]!.id.slice(4) },
      path,
      limits: { triggerTokens: 1000, keepRecentTokens: 10 },
      countTokens: chars,
    });
    expect(plan).toEqual({
      kind: 'send',
      tokens: expect.any(Number),
      messages: [
        { role: 'system', content: 'Be brief.\n\nSummary of the conversation so far:\nThey said old.' },
        { role: 'user', content: 'new' },
      ],
    });
  });

  it('fails when even the tail it must keep passes the trigger, rather than compacting again', () => {
    const path = [message('user', 'a'.repeat(50)), message('assistant', 'b'), message('user', 'c'.repeat(300))];
    expect(planStep({ system: null, summary: null, path, limits: { triggerTokens: 200, keepRecentTokens: 10 }, countTokens: chars })).toMatchObject({
      kind: 'too-long',
      tailTokens: 300,
    });
  });

  it('compacts on demand only when something comes before the tail', () => {
    const path = [message('user', 'only')];
    expect(planStep({ system: null, summary: null, path, limits: { triggerTokens: 200, keepRecentTokens: 10 }, countTokens: chars, force: true }).kind).toBe('nothing-to-compact');
  });

  it('folds the earlier summary into the next one, the span written as a transcript', () => {
    const request = summaryRequest(undefined, 'Earlier: hello.', [
      message('user', 'add 1+1'),
      message('assistant', null, { toolCalls: [call('x')] }),
      message('tool', '2', { toolCallId: 'x' }),
    ]);
    expect(request).toHaveLength(2);
    expect(request[1]!.content).toBe(
      `<${SUMMARY_TRANSCRIPT_TAG}>\n[summary of what came before]\nEarlier: hello.\n\n[user] add 1+1\n\n[assistant called calculator] {"expression":"1+1"}\n\n[tool result] 2\n</${SUMMARY_TRANSCRIPT_TAG}>`,
    );
  });
});

describe('a compaction policy', () => {
  it('triggers at a fraction of the window (0.8 by default), or at its own token count', () => {
    expect(compactionLimits({}, 1000)).toEqual({ ok: true, limits: { triggerTokens: 800, keepRecentTokens: 200 } });
    expect(compactionLimits({ triggerFraction: 0.5, keepRecentTokens: 50 }, 1000)).toEqual({ ok: true, limits: { triggerTokens: 500, keepRecentTokens: 50 } });
    expect(compactionLimits({ triggerTokens: 300 }, undefined)).toMatchObject({ ok: true, limits: { triggerTokens: 300 } });
    expect(compactionLimits({}, undefined)).toMatchObject({ ok: false });
  });

  it('corrects the tokenizer by what the provider last reported, within bounds', () => {
    expect(countCorrection(null)).toBe(1);
    expect(countCorrection({ reported: 150, counted: 100 })).toBe(1.5);
    expect(countCorrection({ reported: 1, counted: 100 })).toBe(0.25);
    expect(countCorrection({ reported: 0, counted: 100 })).toBe(1);
  });
});

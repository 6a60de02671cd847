import type { MessageOutline } from '../../../src/store/messages-repository';
import { unacceptableBranch } from '../../../src/turns/branch-request';
import { findPathFault } from '../../../src/turns/path-fault';
import { unansweredCallsRefusal } from '../../../src/turns/unanswered-calls';

let nextRow = 1;
const message = (role: string, fields: Partial<MessageOutline> = {}): MessageOutline => ({ rowId: String(nextRow++), role, tool_calls: [], tool_call_id: null, ...fields });
const asking = (...ids: string[]) => message('assistant', { tool_calls: ids.map((id) => ({ id })) });
const result = (id: string, rowId?: string) => message('tool', { tool_call_id: id, ...(rowId ? { rowId } : {}) });

describe('a stored path that providers would refuse', () => {
  it('names the message and the calls, and tells a last step without its results from a fault inside the path', () => {
    const question = message('user');
    const step = asking('a', 'b');
    expect(findPathFault([question, step, result('a'), result('b')])).toBeUndefined();
    expect(findPathFault([question, step])).toMatchObject({ messageId: `msg_${step.rowId}`, unsettledEnd: true, text: `the tool calls a, b of msg_${step.rowId} have no results` });
    expect(findPathFault([question, step, message('user')])).toMatchObject({ unsettledEnd: false });
    const stray = result('z');
    expect(findPathFault([question, stray])).toMatchObject({
      messageId: `msg_${stray.rowId}`,
      text: `msg_${stray.rowId} answers the tool call z, which the assistant message before it did not make`,
    });
  });
});

describe('the history of an edit or a regenerate', () => {
  const edit = { kind: 'edit' as const, from: '9', field: 'fromMessageId' };
  const regenerate = { kind: 'regenerate' as const, from: '9', field: 'fromMessageId' };

  it('refuses an edit of a message that answers the calls before it, and lets it be regenerated', () => {
    const step = asking('call_1');
    // The message a caller's function output came in: an OpenAI input of chat messages, outlined as them.
    const point = '42';
    const before = [message('user'), step];
    const refusal = unacceptableBranch(edit, before, point);
    expect(refusal).toMatchObject({
      code: 'invalid_request',
      details: [{ field: 'fromMessageId', message: expect.stringContaining(`the tool calls call_1 of msg_${step.rowId} have no results`) }],
    });
    expect(refusal!.message).toContain('regenerate it, or edit an earlier message');
    expect(unacceptableBranch(regenerate, [...before, result('call_1', point), message('user', { rowId: point })], point)).toBeUndefined();
  });

  it('lets an edit or a regenerate of a settled path through', () => {
    const before = [message('user'), asking('a'), result('a'), message('assistant')];
    expect(unacceptableBranch(edit, before, '50')).toBeUndefined();
    expect(unacceptableBranch(regenerate, [...before, message('user')], '50')).toBeUndefined();
  });
});

describe("a new turn after the path's last step", () => {
  it('is refused while calls of that step have no results, unless its input answers them first', () => {
    const step = asking('s1', 'c1');
    const lastStep = [step, result('s1')];
    expect(unansweredCallsRefusal(lastStep, 'hello')).toMatchObject({
      code: 'conflict',
      details: { toolCallIds: ['c1'] },
      message: expect.stringContaining(`the tool calls c1 of msg_${step.rowId} have no results`),
    });
    const answering = {
      type: 'chat_messages',
      messages: [
        { role: 'tool', tool_call_id: 'c1', content: 'R' },
        { role: 'user', content: 'and?' },
      ],
    };
    expect(unansweredCallsRefusal(lastStep, answering)).toBeUndefined();
    expect(unansweredCallsRefusal([...lastStep, result('c1')], 'hello')).toBeUndefined();
    expect(unansweredCallsRefusal([], 'hello')).toBeUndefined();
  });
});

import { findToolExchangeFault } from '../../../src/providers/tool-exchange-fault';

const user = { role: 'user' };
const asking = (...ids: string[]) => ({ role: 'assistant', tool_calls: ids.map((id) => ({ id })) });
const result = (id: string) => ({ role: 'tool', tool_call_id: id });

describe('the tool-exchange rules of a history', () => {
  it('accepts every call answered once, right after its assistant message, in any order', () => {
    expect(findToolExchangeFault([])).toBeUndefined();
    expect(findToolExchangeFault([user, { role: 'assistant', tool_calls: null }, user])).toBeUndefined();
    expect(findToolExchangeFault([user, asking('a', 'b', 'c'), result('c'), result('a'), result('b'), { role: 'assistant' }, user])).toBeUndefined();
    expect(findToolExchangeFault([{ role: 'system' }, user, asking('a'), result('a'), asking('a'), result('a')])).toBeUndefined();
  });

  it('finds calls without results: a step cut short, one still waiting, one left behind by a later message', () => {
    expect(findToolExchangeFault([user, asking('a', 'b', 'c'), result('a')])).toEqual({ kind: 'unanswered', index: 1, callIds: ['b', 'c'] });
    expect(findToolExchangeFault([user, asking('a')])).toEqual({ kind: 'unanswered', index: 1, callIds: ['a'] });
    expect(findToolExchangeFault([user, asking('a', 'b'), result('b'), user, result('a')])).toEqual({ kind: 'unanswered', index: 1, callIds: ['a'] });
  });

  it('finds a result that answers no call of the assistant message before its run, or answers one twice', () => {
    expect(findToolExchangeFault([user, result('a')])).toEqual({ kind: 'unexpected_answer', index: 1, callId: 'a' });
    expect(findToolExchangeFault([user, asking('a'), result('a'), user, result('a')])).toEqual({ kind: 'unexpected_answer', index: 4, callId: 'a' });
    expect(findToolExchangeFault([user, asking('a'), result('b')])).toEqual({ kind: 'unexpected_answer', index: 2, callId: 'b' });
    expect(findToolExchangeFault([user, asking('a', 'b'), result('a'), result('a'), result('b')])).toEqual({ kind: 'answered_twice', index: 3, callId: 'a' });
  });
});

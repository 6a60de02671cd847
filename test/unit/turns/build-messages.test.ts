import { buildMessages } from '../../../src/turns/build-messages';
import type { StoredMessage } from '../../../src/store/messages-repository';

const message = (fields: Partial<StoredMessage> & Pick<StoredMessage, 'role' | 'content'>): StoredMessage => ({ id: 'msg_1', turnId: 'turn_1', ...fields });
const call = { id: 'call_0', type: 'function' as const, function: { name: 'calculator', arguments: '{}' } };

describe('the messages a provider request sends', () => {
  it('sends a stopped step as its text alone, and nothing of one that streamed only reasoning', () => {
    expect(
      buildMessages('Be brief.', [
        message({ role: 'user', content: 'first' }),
        message({ role: 'assistant', content: 'half an answer', reasoning: 'thinking', incomplete: true }),
        message({ role: 'user', content: 'second' }),
        message({ role: 'assistant', content: null, reasoning: 'only thinking', incomplete: true }),
        message({ role: 'user', content: 'third' }),
      ]),
    ).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'half an answer' },
      { role: 'user', content: 'second' },
      { role: 'user', content: 'third' },
    ]);
  });

  it('sends an assistant message that only calls tools, never one with neither text nor calls', () => {
    expect(
      buildMessages(null, [
        message({ role: 'user', content: 'go' }),
        message({ role: 'assistant', content: null, toolCalls: [call] }),
        message({ role: 'tool', content: '{"result":1}', toolCallId: 'call_0' }),
        message({ role: 'assistant', content: '' }),
      ]),
    ).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_0', content: '{"result":1}' },
    ]);
  });
});

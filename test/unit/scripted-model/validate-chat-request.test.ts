import { validateChatRequest } from '../../../src/scripted-model/validate-chat-request';

const user = (content: unknown = 'hi') => ({ role: 'user', content });
const call = (id: string, name = 'calculator', args: unknown = '{"expression":"2+2"}') => ({ id, type: 'function', function: { name, arguments: args } });
const assistantCalling = (...ids: string[]) => ({ role: 'assistant', content: null, tool_calls: ids.map((id) => call(id)) });
const toolResult = (id: string, content = '4') => ({ role: 'tool', tool_call_id: id, content });
const body = (messages: unknown[], extra: Record<string, unknown> = {}) => ({ model: 'scripted', messages, ...extra });

function rejection(input: unknown) {
  const result = validateChatRequest(input);
  if (result.ok) throw new Error('expected a rejection');
  expect(result.error.status).toBe(400);
  expect(result.error.type).toBe('invalid_request_error');
  return result.error;
}

describe('validateChatRequest', () => {
  it('accepts valid histories: plain, parallel tool rounds, content parts, developer messages, extra fields', () => {
    const histories = [
      [user()],
      [{ role: 'system', content: 'be brief' }, user(), { role: 'assistant', content: 'hello' }, user('again')],
      [
        { role: 'developer', content: [{ type: 'text', text: 'rules' }] },
        user([
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:,' } },
        ]),
      ],
      [user(), assistantCalling('a', 'b'), toolResult('b'), toolResult('a'), { role: 'assistant', content: 'done' }, user('more')],
      [user(), assistantCalling('a'), toolResult('a'), assistantCalling('c'), toolResult('c')],
      [user(), { role: 'assistant', content: 'let me check', tool_calls: [call('x')] }, toolResult('x', 'result')],
    ];
    for (const messages of histories) {
      const result = validateChatRequest(body(messages, { temperature: 0.2, seed: 1, vendor_extension: { any: true } }));
      expect(result).toMatchObject({ ok: true });
    }
  });

  it('names the tool_call_ids of an assistant message that lack a response, also before a later message', () => {
    const atEnd = rejection(body([user(), assistantCalling('call_a', 'call_b'), toolResult('call_a')]));
    expect(atEnd.message).toBe(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
        'The following tool_call_ids did not have response messages: call_b',
    );
    expect(atEnd.param).toBe('messages.[1].role');
    const beforeUser = rejection(body([user(), assistantCalling('call_x'), user('next')]));
    expect(beforeUser.message).toContain('did not have response messages: call_x');
  });

  it('rejects a tool message that does not answer the assistant message before its run', () => {
    const expected = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
    expect(rejection(body([user(), toolResult('call_a')])).message).toBe(expected);
    expect(rejection(body([user(), assistantCalling('a'), toolResult('other')])).message).toBe(expected);
    // An earlier round's id is not answerable after a later message.
    expect(rejection(body([user(), assistantCalling('a'), toolResult('a'), user('next'), toolResult('a')])).message).toBe(expected);
  });

  it('rejects two tool messages for the same id', () => {
    const error = rejection(body([user(), assistantCalling('a', 'b'), toolResult('a'), toolResult('a'), toolResult('b')]));
    expect(error.message).toContain("'a' has more than one response message");
    expect(error.param).toBe('messages.[3].tool_call_id');
  });

  it('requires tool-call arguments to be a string', () => {
    const error = rejection(body([user(), { role: 'assistant', content: null, tool_calls: [call('a', 'f', { x: 1 })] }, toolResult('a')]));
    expect(error.message).toBe("Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, but got an object instead.");
    expect(error.param).toBe('messages[1].tool_calls[0].function.arguments');
  });

  it('checks the shape of the body and of each message as OpenAI words it', () => {
    expect(rejection([]).message).toBe('The request body must be a JSON object.');
    expect(rejection({ messages: [user()] }).message).toBe("Missing required parameter: 'model'.");
    expect(rejection(body([])).message).toContain("Invalid 'messages': empty array.");
    expect(rejection({ model: '', messages: [user()] }).message).toContain("Invalid 'model': empty string.");
    expect(rejection(body([{ role: 'robot', content: 'x' }])).message).toBe("Invalid value: \"robot\". Supported values are: 'system', 'developer', 'user', 'assistant', 'tool'.");
    expect(rejection(body([{ content: 'x' }])).message).toBe("Missing required parameter: 'messages[0].role'.");
    expect(rejection(body([user(), assistantCalling('a'), { role: 'tool', content: 'x' }])).message).toBe("Missing required parameter: 'messages[2].tool_call_id'.");
    expect(rejection(body([user(42)])).message).toBe("Invalid 'messages[0].content': expected a string or an array of content parts.");
    expect(rejection(body([user([{ type: 'text', text: 3 }])])).message).toBe("Invalid type for 'messages[0].content[0].text': expected a string, but got a number instead.");
    expect(rejection(body([user(), { role: 'assistant', content: null }])).message).toBe("Invalid 'messages[1]': an assistant message needs 'content' or 'tool_calls'.");
    expect(rejection(body([user(), assistantCalling('a'), toolResult('a', { result: 4 } as never)])).param).toBe('messages[2].content');
  });

  it('checks tools and tool_choice', () => {
    const tool = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object' } } });
    expect(validateChatRequest(body([user()], { tools: [tool('calc')], tool_choice: { type: 'function', function: { name: 'calc' } } }))).toMatchObject({
      ok: true,
    });
    expect(rejection(body([user()], { tools: [tool('has space')] })).message).toContain("Invalid 'tools[0].function.name': string does not match pattern");
    expect(rejection(body([user()], { tools: [tool('calc')], tool_choice: 'sometimes' })).message).toBe(
      "Invalid value: \"sometimes\". Supported values are: 'auto', 'none', 'required'.",
    );
    expect(rejection(body([user()], { tools: [tool('calc')], tool_choice: { type: 'function', function: { name: 'other' } } })).message).toBe(
      "Invalid value for 'tool_choice': function 'other' is not among the 'tools'.",
    );
    expect(rejection(body([user()], { tool_choice: 'required' })).message).toContain("'tool_choice' is only allowed when 'tools' are specified");
  });
});

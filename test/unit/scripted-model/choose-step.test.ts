import type { ChatMessage, ChatRequest, ToolDefinition } from '../../../src/scripted-model/chat-request-schema';
import { chooseStep, type ChooseStepInput } from '../../../src/scripted-model/choose-step';
import { scripted } from '../../support/scripted';
import { summaryRequest } from '../../../src/turns/compaction-plan';

const user = (content: string): ChatMessage => ({ role: 'user', content });
const callRound = (id: string, name: string, result: string): ChatMessage[] => [
  { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: '{}' } }] },
  { role: 'tool', tool_call_id: id, content: result },
];
const tools: ToolDefinition[] = [
  { type: 'function', function: { name: 'calculator', parameters: { type: 'object' } } },
  { type: 'function', function: { name: 'current_time' } },
];

function choose(messages: ChatMessage[], overrides: Omit<Partial<ChooseStepInput>, 'request'> & { request?: Partial<ChatRequest> } = {}) {
  const { request, ...rest } = overrides;
  const choice = chooseStep({
    request: { model: 'scripted', messages, ...request },
    scenarioHeader: undefined,
    countArrival: () => 0,
    defaultTokenDelayMs: 15,
    ...rest,
  });
  if (!choice.ok) throw new Error(choice.error.message);
  return choice.step;
}

describe('chooseStep', () => {
  const scenario = { steps: [{ text: 'first' }, { text: 'second' }] };

  it('counts the assistant messages after the scenario message to pick the step', () => {
    expect(choose([user(scripted(scenario))])).toEqual({ text: 'first' });
    expect(choose([user(scripted(scenario)), ...callRound('a', 'f', '1')])).toEqual({ text: 'second' });
    // Earlier turns do not count: only what follows the scenario's own message.
    expect(choose([user('hello'), { role: 'assistant', content: 'hi' }, user(scripted(scenario))])).toEqual({ text: 'first' });
  });

  it('anchors a header scenario at the last user message', () => {
    const messages = [user('a'), { role: 'assistant' as const, content: 'b' }, user('c'), ...callRound('x', 'f', '1')];
    expect(choose(messages, { scenarioHeader: JSON.stringify(scenario) })).toEqual({ text: 'second' });
  });

  it('answers by default, at full speed, past the last step', () => {
    const step = choose([user(scripted(scenario)), ...callRound('a', 'f', '1'), ...callRound('b', 'calculator', '4')]);
    expect(step).toEqual({ text: 'Tool results: calculator → 4', tokenDelayMs: 0 });
  });

  it('picks attempts[min(k, last)] for the k-th arrival of the same messages', () => {
    const attempts = { attempts: [{ error: { status: 503 } }, { text: 'second try' }] };
    const messages = [user(scripted(attempts))];
    expect(choose(messages, { countArrival: () => 0 })).toEqual({ error: { status: 503 } });
    expect(choose(messages, { countArrival: () => 1 })).toEqual({ text: 'second try' });
    expect(choose(messages, { countArrival: () => 7 })).toEqual({ text: 'second try' });
  });

  it('asks for the arrival count only for attempts', () => {
    const countArrival = jest.fn(() => 0);
    choose([user(scripted({ text: 'plain' }))], { countArrival });
    expect(countArrival).not.toHaveBeenCalled();
  });

  it('returns the scenario error as a value', () => {
    const choice = chooseStep({ request: { model: 'm', messages: [user('[[scripted nope]]')] }, scenarioHeader: undefined, countArrival: () => 0, defaultTokenDelayMs: 0 });
    expect(choice).toMatchObject({ ok: false, error: { status: 400, code: 'invalid_scenario' } });
  });

  describe('without a scenario', () => {
    it('summarises the last round of tool results in order, naming the tools', () => {
      const messages: ChatMessage[] = [
        user('use tools'),
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'calculator', arguments: '{}' } },
            { id: 'c2', type: 'function', function: { name: 'current_time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '4' },
        { role: 'tool', tool_call_id: 'c2', content: JSON.stringify({ iso: '2024-01-01T00:00:00Z', formatted: 'x'.repeat(200) }) },
      ];
      const step = choose(messages);
      expect(step.text).toMatch(/^Tool results: calculator → 4; current_time → \{"iso":"2024-01-01T00:00:00Z".*…$/);
      expect(step.text!.length).toBe('Tool results: calculator → 4; current_time → '.length + 80);
      expect(step.tokenDelayMs).toBe(15);
    });

    it('calls the offered tools when asked to use tools, and only then', () => {
      expect(choose([user('Please USE TOOLS now')], { request: { tools } })).toEqual({ toolCalls: 'offered', tokenDelayMs: 15 });
      expect(choose([user('use tools')]).text).toMatch(/^You said: "use tools"/);
      expect(choose([user('use tools')], { request: { tools, tool_choice: 'none' } }).toolCalls).toBeUndefined();
      expect(choose([user('anything')], { request: { tools, tool_choice: 'required' } }).toolCalls).toBe('offered');
    });

    it('echoes the user, at the default pace', () => {
      const step = choose([user('Hello   there\nfriend')], { defaultTokenDelayMs: 3 });
      expect(step.text).toMatch(/^You said: "Hello there friend"\. I am Switchyard's scripted model/);
      expect(step.tokenDelayMs).toBe(3);
    });
  });

  it('answers a compaction request with a short summary of its transcript, whatever scenarios the transcript quotes', () => {
    const request = summaryRequest(undefined, 'Summary of 2 messages.', [
      { id: 'msg_1', role: 'user', content: `what is 2+2? ${scripted({ tokens: 500 })}`, turnId: 't' },
      { id: 'msg_2', role: 'assistant', content: 'It is 4.', turnId: 't' },
    ]) as ChatMessage[];
    expect(choose(request)).toEqual({ text: 'Summary of 2 messages and an earlier summary. The user said: "what is 2+2?".' });
  });
});

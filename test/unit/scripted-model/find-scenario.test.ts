import type { ChatMessage } from '../../../src/scripted-model/chat-request-schema';
import { findScenario } from '../../../src/scripted-model/find-scenario';
import { parseScenario } from '../../../src/scripted-model/scenario-schema';

const user = (content: Extract<ChatMessage, { role: 'user' }>['content']): ChatMessage => ({ role: 'user', content });
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });

describe('parseScenario', () => {
  it('turns the one-step shorthand into the long form', () => {
    expect(parseScenario({ text: 'hi' })).toEqual({ ok: true, scenario: { steps: [{ text: 'hi' }] } });
    expect(parseScenario({ attempts: [{ error: { status: 503 } }, { text: 'ok' }] })).toEqual({
      ok: true,
      scenario: { steps: [{ attempts: [{ error: { status: 503 } }, { text: 'ok' }] }] },
    });
  });

  it('says what is wrong, and where', () => {
    const message = (json: unknown) => {
      const parsed = parseScenario(json);
      return parsed.ok ? 'no error' : parsed.message;
    };
    expect(message({ txt: 'typo' })).toBe('Unrecognized key: "txt"');
    expect(message({ steps: [{ text: 'a' }, { attempts: [{ tokens: 'many' }] }] })).toBe('"steps[1].attempts[0].tokens": Invalid input: expected number, received string');
    expect(message({ toolCalls: [{ name: 'f', arguments: 3 }] })).toBe('"toolCalls[0].arguments": expected an object or a string');
    expect(message({ toolCalls: 'all' })).toBe('"toolCalls": Invalid input: expected "offered"');
    expect(message({ cutAfterTokens: 1, stallAfterTokens: 1 })).toContain('exclude each other');
    expect(message({ error: { status: 200 } })).toContain('error.status');
    expect(message({ steps: [] })).toContain('"steps":');
  });
});

describe('findScenario', () => {
  it('takes the header first, anchored at the last user message', () => {
    const messages = [user('one [[scripted {"text":"from message"}]]'), assistant('x'), user('two')];
    expect(findScenario('{"text":"from header"}', messages)).toEqual({ kind: 'found', scenario: { steps: [{ text: 'from header' }] }, anchorIndex: 2 });
  });

  it('reads the last user message only, the JSON running to its last "]]"', () => {
    const earlier = [user('[[scripted {"text":"old"}]]'), assistant('old')];
    const messages = [...earlier, user('now [[scripted {"text":"with ]] inside and [[brackets]]"}]] and after'), assistant('…')];
    expect(findScenario(undefined, messages)).toEqual({
      kind: 'found',
      scenario: { steps: [{ text: 'with ]] inside and [[brackets]]' }] },
      anchorIndex: 2,
    });
    // A plain message after a scripted one is not answered with the earlier scenario.
    expect(findScenario(undefined, [...earlier, user('hello')])).toEqual({ kind: 'none' });
  });

  it('anchors at the last user message through the tool results that follow it', () => {
    const toolStep: ChatMessage[] = [
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'done' },
    ];
    const messages = [user('plain'), assistant('x'), user('[[scripted {"steps":[{"text":"a"},{"text":"b"}]}]]'), ...toolStep];
    expect(findScenario(undefined, messages)).toMatchObject({ kind: 'found', anchorIndex: 2 });
  });

  it('reads the text parts of a content array, joined', () => {
    const messages = [
      user([
        { type: 'text', text: '[[scripted {"steps": [' },
        { type: 'image_url', image_url: { url: 'data:,' } },
        { type: 'text', text: '{"text": "parts"}]}]]' },
      ]),
    ];
    expect(findScenario(undefined, messages)).toMatchObject({ kind: 'found', scenario: { steps: [{ text: 'parts' }] }, anchorIndex: 0 });
  });

  it('is none without a marker, and an error value for broken JSON or an invalid scenario', () => {
    expect(findScenario(undefined, [user('just [[chatting]]')])).toEqual({ kind: 'none' });
    const badJson = findScenario(undefined, [user('[[scripted {"text": }]]')]);
    expect(badJson).toMatchObject({ kind: 'invalid', error: { status: 400, code: 'invalid_scenario', param: 'messages[0].content' } });
    expect(badJson.kind === 'invalid' && badJson.error.message).toMatch(/^The scripted scenario in messages\[0\] is not valid JSON: /);
    const unclosed = findScenario(undefined, [user('[[scripted {"text": "x"}')]);
    expect(unclosed.kind === 'invalid' && unclosed.error.message).toContain('has no closing "]]"');
    const badHeader = findScenario('{"tokens": -1}', [user('hi')]);
    expect(badHeader.kind === 'invalid' && badHeader.error.message).toMatch(/x-scripted-scenario header is invalid: "tokens": /);
  });
});

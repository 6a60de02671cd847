import Ajv from 'ajv';
import type { ChatMessage, ChatRequest } from '../../../src/scripted-model/chat-request-schema';
import { chooseStep } from '../../../src/scripted-model/choose-step';
import { scripted } from '../../support/scripted';

const schema = {
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'integer', minimum: 1 }, tags: { type: 'array', items: { type: 'string' } } },
  required: ['city', 'population', 'tags'],
  additionalProperties: false,
};
const asJson: ChatRequest['response_format'] = { type: 'json_schema', json_schema: { name: 'city', schema } };
const user = (content: string): ChatMessage => ({ role: 'user', content });
const fits = new Ajv().compile(schema);

function answer(messages: ChatMessage[], format: ChatRequest['response_format'] = asJson): string | undefined {
  const choice = chooseStep({ request: { model: 'scripted', messages, response_format: format }, scenarioHeader: undefined, countArrival: () => 0, defaultTokenDelayMs: 0 });
  if (!choice.ok) throw new Error(choice.error.message);
  return choice.step.text;
}

describe('the scripted model and response_format', () => {
  it('answers JSON that fits the schema, the same each time, with or without a scenario', () => {
    const plain = answer([user('hello')])!;
    expect(fits(JSON.parse(plain))).toBe(true);
    expect(answer([user('hello')])).toBe(plain);
    expect(answer([user(scripted({ tokenDelayMs: 1 }))])).toBe(plain);
    expect(answer([user('hi')], { type: 'json_object' })).toBe('{}');
  });

  it('answers JSON that does not fit when the step says invalidOutput, and a step text as it is', () => {
    expect(fits(JSON.parse(answer([user(scripted({ invalidOutput: true }))])!))).toBe(false);
    expect(() => JSON.parse(answer([user(scripted({ invalidOutput: true }))], { type: 'json_object' })!)).toThrow();
    expect(answer([user(scripted({ text: 'not json' }))])).toBe('not json');
  });

  it("answers Switchyard's repair request with the scenario's next step", () => {
    const steps = { steps: [{ invalidOutput: true }, { invalidOutput: true }] };
    const repaired = [user(scripted(steps)), { role: 'assistant' as const, content: '{}' }, user('That answer does not fit.')];
    expect(fits(JSON.parse(answer(repaired)!))).toBe(false);
    // Past the last step: JSON that fits.
    expect(fits(JSON.parse(answer([user(scripted({ invalidOutput: true })), { role: 'assistant', content: '{}' }, user('That answer does not fit.')])!))).toBe(true);
    // Without response_format a plain message after a scripted one is a chat of its own.
    expect(answer(repaired, null)).toMatch(/^You said/);
  });
});

import { sampleArguments } from '../../../src/scripted-model/sample-arguments';

describe('sampleArguments', () => {
  it('fills the required properties only, each with a plausible value of its type', () => {
    const schema = {
      type: 'object',
      properties: {
        city: { type: 'string' },
        days: { type: 'integer', minimum: 3 },
        ratio: { type: 'number', maximum: 0.5 },
        metric: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string' } },
        when: { type: 'string', format: 'date-time' },
        nickname: { type: ['string', 'null'] },
        optional: { type: 'string' },
      },
      required: ['city', 'days', 'ratio', 'metric', 'tags', 'when', 'nickname'],
    };
    expect(sampleArguments(schema)).toEqual({
      city: 'example',
      days: 3,
      ratio: 0.5,
      metric: true,
      tags: ['example'],
      when: '2024-01-01T12:00:00Z',
      nickname: 'example',
    });
  });

  it('prefers a default, a const, an example or the first enum value', () => {
    const schema = {
      type: 'object',
      properties: {
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        count: { type: 'integer', default: 5 },
        kind: { const: 'fixed' },
        query: { type: 'string', examples: ['weather in Paris'] },
        expression: { type: 'string', description: 'The arithmetic expression, e.g. "12.5 * (3 - 1)"' },
      },
      required: ['unit', 'count', 'kind', 'query', 'expression'],
    };
    expect(sampleArguments(schema)).toEqual({ unit: 'celsius', count: 5, kind: 'fixed', query: 'weather in Paris', expression: '12.5 * (3 - 1)' });
  });

  it('follows nested objects, arrays with minItems and the first branch of anyOf', () => {
    const schema = {
      type: 'object',
      properties: {
        address: { type: 'object', properties: { street: { type: 'string', minLength: 10 }, code: { type: 'string', maxLength: 3 } }, required: ['street', 'code'] },
        points: { type: 'array', minItems: 2, items: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
        either: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
      },
      required: ['address', 'points', 'either'],
    };
    expect(sampleArguments(schema)).toEqual({ address: { street: 'examplexxx', code: 'exa' }, points: [{ x: 1 }, { x: 1 }], either: 1 });
  });

  it('gives an empty object for a schema without properties and stops at a depth limit', () => {
    expect(sampleArguments({ type: 'object' })).toEqual({});
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 20; i++) deep = { type: 'object', properties: { next: deep }, required: ['next'] };
    expect(JSON.stringify(sampleArguments(deep))).toContain('null');
  });
});

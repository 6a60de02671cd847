import { z } from 'zod';
import { createArgumentChecker } from '../../../src/tools/argument-checker';
import { builtinToExecutable, defineBuiltinTool } from '../../../src/tools/builtin/builtin-tool';
import { fieldsToJsonSchema } from '../../../src/tools/http/fields-to-json-schema';
import { fieldListSchema } from '../../../src/tools/http/fields-to-json-schema';
import { createToolRegistry } from '../../../src/tools/tool-registry';
import pino from 'pino';

const weather = defineBuiltinTool({
  name: 'weather',
  description: 'Forecast',
  input: z.strictObject({
    city: z.string(),
    days: z.int().min(1).max(14).optional(),
    unit: z.enum(['c', 'f']).default('c'),
    stops: z.array(z.strictObject({ name: z.string() })).optional(),
  }),
  run: async (args) => args,
});

const registry = () => createToolRegistry([builtinToExecutable(weather)], { logger: pino({ level: 'silent' }), close: async () => undefined });
const message = (check: { ok: boolean; error?: { message: string } }) => {
  expect(check.ok).toBe(false);
  return check.error!.message;
};

describe('checkArguments', () => {
  it('accepts valid arguments and fills in schema defaults', () => {
    expect(registry().checkArguments('weather', '{"city":"Paris","days":3}')).toEqual({ ok: true, args: { city: 'Paris', days: 3, unit: 'c' } });
  });

  it('treats empty argument text as {} (providers send nothing for no arguments)', () => {
    expect(message(registry().checkArguments('weather', ''))).toBe('"city" is required');
  });

  it('says when the text is not JSON', () => {
    expect(message(registry().checkArguments('weather', '{"city": "Par'))).toMatch(/^arguments are not valid JSON: /);
  });

  it('requires a JSON object', () => {
    expect(message(registry().checkArguments('weather', '["Paris"]'))).toBe('arguments must be a JSON object, not an array');
    expect(message(registry().checkArguments('weather', '"Paris"'))).toBe('arguments must be a JSON object, not a string');
    expect(message(registry().checkArguments('weather', 'null'))).toBe('arguments must be a JSON object, not null');
  });

  it('names missing, unexpected and mistyped properties, all at once', () => {
    expect(message(registry().checkArguments('weather', '{"colour":"red"}'))).toBe('"city" is required; unexpected property "colour"');
    expect(message(registry().checkArguments('weather', '{"city":"Paris","days":2.5}'))).toBe('"days" must be integer');
    expect(message(registry().checkArguments('weather', '{"city":"Paris","days":30}'))).toBe('"days" must be <= 14');
    expect(message(registry().checkArguments('weather', '{"city":7,"unit":"k"}'))).toBe('"city" must be string; "unit" must be one of "c", "f"');
  });

  it('names nested properties the way the model wrote them', () => {
    expect(message(registry().checkArguments('weather', '{"city":"Paris","stops":[{"name":"a"},{"nom":"b"}]}'))).toBe(
      '"stops[1].name" is required; unexpected property "stops[1].nom"',
    );
  });

  it('answers an unknown tool with invalid_arguments', () => {
    expect(registry().checkArguments('forecast', '{}')).toEqual({ ok: false, error: { code: 'invalid_arguments', message: 'unknown tool "forecast"' } });
  });
});

describe('createArgumentChecker', () => {
  it('validates draft-07 schemas with their own meaning (tuple items)', () => {
    const checker = createArgumentChecker({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { point: { type: 'array', items: [{ type: 'number' }, { type: 'string' }] } },
    });
    expect(checker.check({ point: [1, 'a'] }).ok).toBe(true);
    expect(message(checker.check({ point: ['a', 1] }))).toBe('"point[0]" must be number; "point[1]" must be string');
  });

  it('validates 2020-12 schemas (prefixItems, $defs)', () => {
    const checker = createArgumentChecker({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { point: { type: 'array', prefixItems: [{ $ref: '#/$defs/n' }] } },
      $defs: { n: { type: 'number' } },
    });
    expect(checker.check({ point: [1] }).ok).toBe(true);
    expect(message(checker.check({ point: ['x'] }))).toBe('"point[0]" must be number');
  });

  it('folds nullable unions into one sentence', () => {
    const checker = createArgumentChecker({ type: 'object', properties: { note: { anyOf: [{ type: 'string' }, { type: 'null' }] } } });
    expect(message(checker.check({ note: 3 }))).toBe('"note" must be string or null');
  });

  it('throws on a schema that is not JSON Schema', () => {
    expect(() => createArgumentChecker({ type: 'object', properties: { a: { type: 'strin' } } })).toThrow();
  });
});

describe('fieldsToJsonSchema', () => {
  it('turns a fields list into a closed object schema', () => {
    const fields = fieldListSchema.parse([
      { name: 'city', required: true, description: 'City name' },
      { name: 'days', type: 'integer', default: 3 },
      { name: 'unit', enum: ['c', 'f'] },
      { name: 'tags', type: 'array', items: 'string' },
      { name: 'filter', type: 'object' },
    ]);
    expect(fieldsToJsonSchema(fields)).toEqual({
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name' },
        days: { type: 'integer', default: 3 },
        unit: { type: 'string', enum: ['c', 'f'] },
        tags: { type: 'array', items: { type: 'string' } },
        filter: { type: 'object' },
      },
      required: ['city'],
      additionalProperties: false,
    });
  });

  it('leaves out "required" when nothing is', () => {
    expect(fieldsToJsonSchema(fieldListSchema.parse([{ name: 'q' }]))).toEqual({ type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false });
  });

  it('refuses items on a non-array field and a field declared twice', () => {
    expect(fieldListSchema.safeParse([{ name: 'a', items: 'string' }]).error?.issues[0]?.message).toBe('"items" is only allowed for type "array"');
    expect(fieldListSchema.safeParse([{ name: 'a' }, { name: 'a' }]).error?.issues[0]?.message).toBe('field "a" is declared twice');
  });
});

describe('createArgumentChecker', () => {
  const invalidSchema = { type: 'object', properties: { n: { type: 'no-such-type' } } };

  it('compiles the schema at once by default, so that an invalid one fails the load', () => {
    expect(() => createArgumentChecker(invalidSchema)).toThrow();
  });

  it("compiles it at the first check with compile: 'at-first-check', and checks as a compiled one does", () => {
    const checker = createArgumentChecker(invalidSchema, { compile: 'at-first-check' });
    expect(() => checker.check({ n: 1 })).toThrow();
    const lazy = createArgumentChecker({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }, { compile: 'at-first-check' });
    expect(lazy.check({ n: 1 })).toEqual({ ok: true, args: { n: 1 } });
    expect(lazy.checkText('{"n":"one"}')).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
  });
});

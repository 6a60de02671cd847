import pino from 'pino';
import { builtinToExecutable, type BuiltinTool } from '../../../src/tools/builtin/builtin-tool';
import { createCalculatorTool } from '../../../src/tools/builtin/calculator';
import { createCurrentTimeTool } from '../../../src/tools/builtin/current-time';
import { defaultBuiltinTools } from '../../../src/tools/builtin/default-builtins';
import { createRandomNumberTool } from '../../../src/tools/builtin/random-number';
import { createToolRegistry } from '../../../src/tools/tool-registry';

const registryOf = (tools: BuiltinTool[]) => createToolRegistry(tools.map(builtinToExecutable), { logger: pino({ level: 'silent' }), close: async () => undefined });
const context = () => ({ turnId: 'turn_1', toolCallId: 'call_1', attempt: 1, signal: new AbortController().signal });

describe('shipped builtins', () => {
  it('are calculator, current_time and random_number, with object schemas without $schema', () => {
    const registry = registryOf(defaultBuiltinTools());
    expect(registry.list().map((tool) => [tool.name, tool.kind])).toEqual([
      ['calculator', 'builtin'],
      ['current_time', 'builtin'],
      ['random_number', 'builtin'],
    ]);
    for (const tool of registry.list()) {
      expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      expect(tool.inputSchema).not.toHaveProperty('$schema');
    }
  });

  it('have schemas that compile (at their first check) and refuse what they do not declare', () => {
    const registry = registryOf(defaultBuiltinTools());
    for (const tool of registry.list()) {
      expect(registry.checkArguments(tool.name, '{"not_declared":1}')).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    }
  });
});

describe('calculator', () => {
  const registry = registryOf([createCalculatorTool()]);

  it('computes, hiding floating-point noise', async () => {
    expect(await registry.execute('calculator', { expression: '(2 + 3) * sqrt(16) / 2' }, context())).toEqual({
      ok: true,
      result: { expression: '(2 + 3) * sqrt(16) / 2', result: 10 },
    });
    expect(await registry.execute('calculator', { expression: '0.1 + 0.2' }, context())).toMatchObject({ ok: true, result: { result: 0.3 } });
  });

  it('fails for good (not retryable) on division by zero and bad syntax', async () => {
    expect(await registry.execute('calculator', { expression: '1/0' }, context())).toEqual({
      ok: false,
      error: { code: 'division_by_zero', message: 'division by zero', retryable: false },
    });
    expect(await registry.execute('calculator', { expression: 'process.exit()' }, context())).toMatchObject({ ok: false, error: { code: 'invalid_expression', retryable: false } });
  });

  it('refuses an expression longer than the limit at the argument check', () => {
    const check = registry.checkArguments('calculator', JSON.stringify({ expression: '1+'.repeat(300) }));
    expect(check).toEqual({ ok: false, error: { code: 'invalid_arguments', message: '"expression" must NOT have more than 500 characters' } });
  });
});

describe('current_time', () => {
  const registry = registryOf([createCurrentTimeTool({ now: () => new Date('2025-07-01T12:34:56.000Z') })]);

  it('gives UTC by default', async () => {
    expect(await registry.execute('current_time', {}, context())).toMatchObject({
      ok: true,
      result: { iso: '2025-07-01T12:34:56.000Z', timeZone: 'UTC', localIso: '2025-07-01T12:34:56+00:00' },
    });
  });

  it('gives the local time of an IANA zone, with its offset', async () => {
    const outcome = await registry.execute('current_time', { timeZone: 'Asia/Kolkata' }, context());
    expect(outcome).toMatchObject({ ok: true, result: { iso: '2025-07-01T12:34:56.000Z', timeZone: 'Asia/Kolkata', localIso: '2025-07-01T18:04:56+05:30' } });
    expect((outcome as { result: { formatted: string } }).result.formatted).toMatch(/July 1, 2025/);
  });

  it('refuses an unknown zone', async () => {
    expect(await registry.execute('current_time', { timeZone: 'Mars/Olympus' }, context())).toMatchObject({
      ok: false,
      error: { code: 'invalid_time_zone', message: expect.stringContaining('"Mars/Olympus"'), retryable: false },
    });
  });
});

describe('random_number', () => {
  it('returns whole numbers with both ends included by default', async () => {
    const low = registryOf([createRandomNumberTool({ random: () => 0 })]);
    const high = registryOf([createRandomNumberTool({ random: () => 0.999999 })]);
    expect(await low.execute('random_number', { min: 1, max: 6 }, context())).toEqual({ ok: true, result: { value: 1 } });
    expect(await high.execute('random_number', { min: 1, max: 6 }, context())).toEqual({ ok: true, result: { value: 6 } });
    expect(await high.execute('random_number', { min: 0.5, max: 2.5 }, context())).toEqual({ ok: true, result: { value: 2 } });
  });

  it('returns decimals when asked', async () => {
    const registry = registryOf([createRandomNumberTool({ random: () => 0.5 })]);
    expect(await registry.execute('random_number', { min: 1, max: 2, integer: false }, context())).toEqual({ ok: true, result: { value: 1.5 } });
  });

  it('refuses min > max and a range without a whole number', async () => {
    const registry = registryOf([createRandomNumberTool()]);
    expect(await registry.execute('random_number', { min: 5, max: 1 }, context())).toEqual({
      ok: false,
      error: { code: 'invalid_arguments', message: '"min" must not be greater than "max"', retryable: false },
    });
    expect(await registry.execute('random_number', { min: 1.2, max: 1.8 }, context())).toMatchObject({ ok: false, error: { code: 'invalid_range' } });
  });
});

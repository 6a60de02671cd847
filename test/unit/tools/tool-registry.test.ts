import pino from 'pino';
import { z } from 'zod';
import { builtinToExecutable, defineBuiltinTool, type BuiltinTool } from '../../../src/tools/builtin/builtin-tool';
import { createToolRegistry } from '../../../src/tools/tool-registry';
import { ToolExecutionError, ToolLoadError } from '../../../src/tools/tool-errors';
import type { ToolCallContext } from '../../../src/tools/tool';

const tool = (name: string, run: BuiltinTool['run'], timeoutMs = 1_000) =>
  defineBuiltinTool({ name, description: name, input: z.strictObject({ n: z.number().optional() }), timeoutMs, run });
const registryOf = (tools: BuiltinTool[], close = async () => undefined) => createToolRegistry(tools.map(builtinToExecutable), { logger: pino({ level: 'silent' }), close });
const context = (signal = new AbortController().signal): ToolCallContext => ({ turnId: 'turn_1', toolCallId: 'call_1', attempt: 1, signal });

describe('createToolRegistry', () => {
  it('lists by name and refuses duplicate names, naming both sources', () => {
    const registry = registryOf([tool('zeta', async () => 1), tool('alpha', async () => 2)]);
    expect(registry.list().map((each) => each.name)).toEqual(['alpha', 'zeta']);
    expect(registry.get('zeta')).toMatchObject({ name: 'zeta', kind: 'builtin', timeoutMs: 1_000, retries: 0 });
    expect(registry.get('nope')).toBeUndefined();
    expect(() => registryOf([tool('same', async () => 1), tool('same', async () => 2)])).toThrow(new ToolLoadError('tool "same" is declared twice: by builtin and by builtin'));
  });

  it('passes the call context through and returns the result', async () => {
    const seen: ToolCallContext[] = [];
    const registry = registryOf([tool('ctx', async (_args, ctx) => (seen.push(ctx), 'done'))]);
    expect(await registry.execute('ctx', { n: 1 }, { ...context(), attempt: 3 })).toEqual({ ok: true, result: 'done' });
    expect(seen[0]).toMatchObject({ turnId: 'turn_1', toolCallId: 'call_1', attempt: 3 });
    expect(seen[0]!.signal).toBeInstanceOf(AbortSignal);
  });

  it('never throws: an unexpected error is a retryable failure, an expected one is not', async () => {
    const registry = registryOf([
      tool('broken', async () => {
        throw new Error('disk on fire');
      }),
      tool('picky', async () => {
        throw new ToolExecutionError('not_found', 'no such thing');
      }),
    ]);
    expect(await registry.execute('broken', {}, context())).toEqual({ ok: false, error: { code: 'internal', message: 'disk on fire', retryable: true } });
    expect(await registry.execute('picky', {}, context())).toEqual({ ok: false, error: { code: 'not_found', message: 'no such thing', retryable: false } });
  });

  it('checks arguments again before running, and refuses unknown tools', async () => {
    const ran = jest.fn(async () => 'ran');
    const registry = registryOf([tool('strict', ran)]);
    expect(await registry.execute('strict', { extra: true }, context())).toEqual({
      ok: false,
      error: { code: 'invalid_arguments', message: 'unexpected property "extra"', retryable: false },
    });
    expect(await registry.execute('missing', {}, context())).toEqual({ ok: false, error: { code: 'unknown_tool', message: 'unknown tool "missing"', retryable: false } });
    expect(ran).not.toHaveBeenCalled();
  });

  it('times out a tool that ignores its signal, and aborts the signal it was given', async () => {
    let given: AbortSignal | undefined;
    const registry = registryOf([tool('stuck', (_args, ctx) => ((given = ctx.signal), new Promise(() => undefined)), 50)]);
    expect(await registry.execute('stuck', {}, context())).toEqual({ ok: false, error: { code: 'timeout', message: 'no result within 50 ms', retryable: true } });
    expect(given?.aborted).toBe(true);
  });

  it('reports a cancellation by the caller as cancelled, not retryable', async () => {
    const controller = new AbortController();
    const registry = registryOf([
      tool('waits', (_args, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')))), 10_000),
    ]);
    const pending = registry.execute('waits', {}, context(controller.signal));
    controller.abort();
    expect(await pending).toEqual({ ok: false, error: { code: 'cancelled', message: 'the call was cancelled', retryable: false } });
  });

  it('closes its sources once and refuses to run afterwards', async () => {
    const close = jest.fn(async () => undefined);
    const registry = registryOf([tool('after', async () => 'ran')], close);
    await registry.close();
    expect(close).toHaveBeenCalledTimes(1);
    expect(await registry.execute('after', {}, context())).toMatchObject({ ok: false, error: { code: 'unavailable', retryable: true } });
  });
});

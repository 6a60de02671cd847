import { z } from 'zod';
import { ToolExecutionError } from '../tool-errors';
import { defineBuiltinTool, type BuiltinTool } from './builtin-tool';

export interface RandomNumberOptions {
  /** A source of numbers in [0, 1); injectable so that tests are deterministic. Default `Math.random`. */
  random?: () => number;
}

/** `random_number`: dice, draws and samples, which models are bad at. */
export function createRandomNumberTool(options: RandomNumberOptions = {}): BuiltinTool {
  const random = options.random ?? Math.random;
  return defineBuiltinTool({
    name: 'random_number',
    description:
      'Returns a random number between min and max. With integer true (the default) a whole number, both ends included; ' +
      'with integer false a decimal number from min up to (not including) max.',
    input: z
      .strictObject({
        min: z.number().describe('The lowest possible value'),
        max: z.number().describe('The highest possible value'),
        integer: z.boolean().default(true).describe('Whether to return a whole number (default true)'),
      })
      .refine((range) => range.min <= range.max, { message: '"min" must not be greater than "max"' }),
    timeoutMs: 1_000,
    async run({ min, max, integer }) {
      return { value: pickRandom({ min, max, integer }, random) };
    },
  });
}

/** Pure but for `random`. Throws `invalid_range` when the range holds no such number. */
export function pickRandom(range: { min: number; max: number; integer: boolean }, random: () => number): number {
  const { min, max } = range;
  if (!Number.isFinite(max - min)) throw new ToolExecutionError('invalid_range', 'the range from min to max is too wide');
  if (!range.integer) return min + random() * (max - min);
  const low = Math.ceil(min);
  const high = Math.floor(max);
  if (low > high) throw new ToolExecutionError('invalid_range', `there is no whole number between ${min} and ${max}`);
  if (!Number.isSafeInteger(low) || !Number.isSafeInteger(high) || !Number.isSafeInteger(high - low + 1)) {
    throw new ToolExecutionError('invalid_range', `whole numbers are limited to ±${Number.MAX_SAFE_INTEGER}`);
  }
  return low + Math.floor(random() * (high - low + 1));
}

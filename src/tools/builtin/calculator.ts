import { z } from 'zod';
import { ToolExecutionError } from '../tool-errors';
import { evaluateExpression, MAX_EXPRESSION_LENGTH } from './arithmetic-expression';
import { defineBuiltinTool, type BuiltinTool } from './builtin-tool';

/** `calculator`: arithmetic a model should not do in its head. Never `eval`: see arithmetic-expression.ts. */
export function createCalculatorTool(): BuiltinTool {
  return defineBuiltinTool({
    name: 'calculator',
    description:
      'Evaluates an arithmetic expression exactly. Supports + - * / % ^ (power), parentheses, unary minus, decimals, ' +
      'the functions sqrt, abs, round (round(x) or round(x, digits)), min and max, and the constants pi and e. ' +
      'Example: "(2 + 3) * sqrt(16) / 2".',
    input: z.strictObject({
      expression: z.string().min(1).max(MAX_EXPRESSION_LENGTH).describe('The arithmetic expression, e.g. "12.5 * (3 - 1) ^ 2"'),
    }),
    timeoutMs: 1_000,
    async run({ expression }) {
      const evaluated = evaluateExpression(expression);
      if (!evaluated.ok) throw new ToolExecutionError(evaluated.code, evaluated.message);
      // 15 significant digits hide binary floating-point noise (0.1 + 0.2) without losing precision a person would notice.
      return { expression, result: Number(evaluated.value.toPrecision(15)) };
    },
  });
}

import type { BuiltinTool } from './builtin-tool';
import { createCalculatorTool } from './calculator';
import { createCurrentTimeTool } from './current-time';
import { createRandomNumberTool } from './random-number';

/** The builtins the service ships: `calculator`, `current_time` and `random_number`. */
export function defaultBuiltinTools(): BuiltinTool[] {
  return [createCalculatorTool(), createCurrentTimeTool(), createRandomNumberTool()];
}

import { z } from 'zod';
import { compileInputSchema } from '../argument-checker';
import type { ExecutableTool } from '../executable-tool';
import type { ToolCallContext } from '../tool';
import { ToolExecutionError } from '../tool-errors';
import { describeZodIssues } from '../../errors/zod-issues';

/**
 * A tool written in the project: its input as a zod schema (the JSON Schema the model sees is
 * derived from it), its work as a function. `run` may throw `ToolExecutionError` for an expected
 * failure; anything else it throws counts as a retryable `internal` failure.
 */
export interface BuiltinTool<Input extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  /** Prefer `z.strictObject`: the JSON Schema then forbids extra properties. */
  input: Input;
  /** Per attempt. Default 10000. */
  timeoutMs?: number;
  /** Extra attempts after the first. Default 0: a builtin that failed will most likely fail again. */
  retries?: number;
  run(args: z.output<Input>, ctx: ToolCallContext): Promise<unknown>;
}

/** Keeps `run`'s argument type tied to `input` where a tool is declared. */
export function defineBuiltinTool<Input extends z.ZodType>(tool: BuiltinTool<Input>): BuiltinTool {
  return tool as unknown as BuiltinTool;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * The registry's view of a builtin. The schema describes the input side (`io: 'input'`), so a
 * field with a default is optional for the model; zod parses again before `run` so that
 * defaults and refinements (say, min <= max) apply.
 */
export function builtinToExecutable(tool: BuiltinTool): ExecutableTool {
  // Valid by construction (zod writes it): compiled at its first check, so that loading the
  // registry loads no Ajv (test/unit/tools/builtin-tools.test.ts checks each builtin's).
  const { inputSchema, checker } = compileInputSchema(z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>, {
    compile: 'at-first-check',
  });
  return {
    source: 'builtin',
    checker,
    descriptor: {
      name: tool.name,
      description: tool.description,
      inputSchema,
      kind: 'builtin',
      timeoutMs: tool.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      retries: tool.retries ?? 0,
    },
    async execute(args, ctx) {
      const parsed = tool.input.safeParse(args);
      if (!parsed.success) {
        return { ok: false, error: { code: 'invalid_arguments', message: describeZodIssues(parsed.error.issues), retryable: false } };
      }
      try {
        return { ok: true, result: await tool.run(parsed.data, ctx) };
      } catch (error) {
        if (ToolExecutionError.isInstance(error)) return { ok: false, error: { code: error.code, message: error.message, retryable: error.retryable } };
        throw error;
      }
    },
  };
}

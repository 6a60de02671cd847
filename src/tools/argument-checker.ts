import type { ArgumentCheck } from './tool';
import { compileJsonSchema, stripSchemaKeyword, type SchemaValidator } from './json-schema-compiler';
import { errorMessage } from '../errors/switchyard-error';
import { describeValidationErrors } from './validation-messages';

export interface ArgumentChecker {
  /** Validates already parsed arguments. Defaults from the schema are filled in place. */
  check(args: unknown): ArgumentCheck;
  /** Parses the model's JSON text, then validates it. */
  checkText(argumentsText: string): ArgumentCheck;
}

const invalid = (message: string): ArgumentCheck => ({ ok: false, error: { code: 'invalid_arguments', message } });

/**
 * Compiles the schema once; throws if the schema itself is invalid. `compile: 'at-first-check'`
 * defers that (and Ajv's load) to the first check, for schemas valid by construction.
 */
export function createArgumentChecker(inputSchema: Record<string, unknown>, options: CompileOptions = {}): ArgumentChecker {
  let compiled: SchemaValidator | undefined = options.compile === 'at-first-check' ? undefined : compileJsonSchema(inputSchema);
  const validate: SchemaValidator = (value) => (compiled ??= compileJsonSchema(inputSchema))(value);

  const check = (args: unknown): ArgumentCheck => {
    // Every kind passes arguments on as named fields (a JSON body, a query string, MCP's
    // `arguments`), so whatever the schema says, they must be one object.
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return invalid(`arguments must be a JSON object, not ${describeJsonType(args)}`);
    }
    const result = validate(args);
    return result.valid ? { ok: true, args } : invalid(describeValidationErrors(result.errors));
  };

  return {
    check,
    checkText(argumentsText) {
      const parsed = parseArgumentsText(argumentsText);
      return parsed.ok ? check(parsed.value) : invalid(parsed.message);
    },
  };
}

export interface CompileOptions {
  /**
   * `at-load` (the default): compiled now, so that a schema from a tool file or an MCP server
   * that is invalid fails the tool's load, naming it. `at-first-check`: compiled when first
   * used, for the builtins' schemas (zod's own JSON Schema of their input), so that a process
   * that checks no builtin's arguments (an API, a worker before its first call) loads no Ajv.
   */
  compile?: 'at-load' | 'at-first-check';
}

/**
 * A tool's schema ready for use: compiled (its `$schema` picks the dialect), and as the
 * descriptor shows it, without `$schema`. Throws if the schema itself is invalid (unless its
 * compile waits for the first check).
 */
export function compileInputSchema(schema: Record<string, unknown>, options: CompileOptions = {}): { inputSchema: Record<string, unknown>; checker: ArgumentChecker } {
  return { checker: createArgumentChecker(schema, options), inputSchema: stripSchemaKeyword(schema) };
}

/**
 * The model's argument text as JSON. An empty text is `{}`: some providers send nothing at all
 * for a call without arguments.
 */
export function parseArgumentsText(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  if (text.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, message: `arguments are not valid JSON: ${errorMessage(error)}` };
  }
}

function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

import type Ajv from 'ajv';
import type Ajv2020 from 'ajv/dist/2020';
import type { ErrorObject, Options } from 'ajv';

/** A compiled schema: true, or the reasons the value does not match. */
export type SchemaValidator = (value: unknown) => { valid: true } | { valid: false; errors: ErrorObject[] };

const OPTIONS: Options = {
  // Every problem at once, so that the model can fix all of them in one retry.
  allErrors: true,
  // Tool schemas come from MCP servers and files we do not control: unknown keywords are
  // annotations to us, not mistakes that should stop the service.
  strict: false,
  // ajv-formats is not a dependency; an unchecked `format` is better than a load failure.
  validateFormats: false,
  // Defaults declared in the schema reach the tool, as the schema's author meant.
  useDefaults: true,
  // Two tools may carry the same `$id` (two servers, same library); each schema stands alone.
  addUsedSchema: false,
  logger: false,
};

/**
 * zod 4 and most MCP servers today write 2020-12 schemas; the TypeScript MCP SDK and older
 * servers write draft-07 ones. One validator of each dialect, chosen by `$schema`: the keywords
 * that differ (`items` as an array, `definitions`, `dependencies`) then mean what their author meant.
 * Shared by the module rather than passed in: they hold no state but compiled code, one per tool
 * schema, compiled once at load.
 *
 * Made (and Ajv loaded) at the first compile: a process that compiles no schema at start (the
 * builtins' are compiled at their first check, builtin-tool.ts) does not load Ajv's modules.
 */
let validators: { draft07: Ajv; draft2020: Ajv2020 } | undefined;
const dialectValidators = () =>
  (validators ??= {
    draft07: new (require('ajv') as typeof import('ajv')).default(OPTIONS),
    draft2020: new (require('ajv/dist/2020') as typeof import('ajv/dist/2020')).default(OPTIONS),
  });

/** What Ajv does not need to see: the meta-schema URL, which Ajv2020 would reject for draft-07. */
export function stripSchemaKeyword(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

/**
 * Compiles a JSON Schema once. Throws (with Ajv's reason) when the schema itself is invalid; the
 * loaders turn that into a load error naming the tool.
 */
export function compileJsonSchema(schema: Record<string, unknown>): SchemaValidator {
  const dialect = typeof schema.$schema === 'string' && /draft-0[4-7]/.test(schema.$schema) ? 'draft07' : 'draft2020';
  const validate = dialectValidators()[dialect].compile(stripSchemaKeyword(schema));
  return (value) => (validate(value) ? { valid: true } : { valid: false, errors: [...(validate.errors ?? [])] });
}

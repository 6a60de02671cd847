import type * as z from 'zod/mini';

/** The parts of a zod schema's definition this generator reads. */
interface Definition {
  type: string;
  shape?: Record<string, z.ZodMiniType>;
  options?: z.ZodMiniType[];
  element?: z.ZodMiniType;
  innerType?: z.ZodMiniType;
  values?: unknown[];
  entries?: Record<string, unknown>;
  format?: string;
  checks?: { _zod: { def: { check: string; value?: number; inclusive?: boolean } } }[];
}

const definitionOf = (schema: z.ZodMiniType) => (schema as unknown as { _zod: { def: Definition } })._zod.def;

/**
 * The source of a check (in the terms of src/shape-check.ts) that accepts what `schema`
 * accepts, for the kinds of schema the protocol uses; any other kind throws, so that a schema
 * the generated check would get wrong is never turned into one.
 */
export function shapeCheckSource(schema: z.ZodMiniType, indent = ''): string {
  const def = definitionOf(schema);
  const inner = (child: z.ZodMiniType) => shapeCheckSource(child, `${indent}  `);
  switch (def.type) {
    case 'string':
    case 'boolean':
    case 'unknown':
      if (def.checks?.length) throw new Error(`${def.type} with checks: not supported by the generated check`);
      return def.type;
    case 'number': {
      const options: string[] = [];
      if (def.format === 'safeint') options.push('integer: true');
      else if (def.format !== undefined) throw new Error(`number format ${def.format}: not supported`);
      for (const { _zod } of def.checks ?? []) {
        if (_zod.def.check !== 'greater_than') throw new Error(`number check ${_zod.def.check}: not supported`);
        options.push(`minimum: ${_zod.def.value}`);
        if (!_zod.def.inclusive) options.push('exclusive: true');
      }
      return options.length ? `number({ ${options.join(', ')} })` : 'number()';
    }
    case 'literal':
      return `oneOf(${def.values!.map((value) => JSON.stringify(value)).join(', ')})`;
    case 'enum':
      return `oneOf(${Object.values(def.entries!)
        .map((value) => JSON.stringify(value))
        .join(', ')})`;
    case 'optional':
    case 'nullable':
      return `${def.type}(${inner(def.innerType!)})`;
    case 'array':
      return `array(${inner(def.element!)})`;
    case 'object': {
      const fields = Object.entries(def.shape!).map(([name, field]) => `${JSON.stringify(name)}: ${inner(field)}`);
      return `object({ ${fields.join(', ')} })`;
    }
    case 'union':
      return `anyOf(\n${def.options!.map((option) => `${indent}  ${inner(option)},\n`).join('')}${indent})`;
    default:
      throw new Error(`a ${def.type} schema: not supported by the generated check`);
  }
}

/** The module `src/server-frame-check.generated.ts`, from the server frame schema. */
export function serverFrameCheckModule(serverFrameSchema: z.ZodMiniType): string {
  const body = shapeCheckSource(serverFrameSchema);
  const used = ['anyOf', 'array', 'boolean', 'nullable', 'number', 'object', 'oneOf', 'optional', 'string', 'unknown'].filter((name) => new RegExp(`\\b${name}\\b`).test(body));
  return [
    '// Generated from serverFrameSchema (./ws-frames.ts) by scripts/write-frame-check.ts:',
    '// `npm run generate -w @switchyard/protocol`. Do not edit; a test fails when it is stale.',
    `import { ${used.join(', ')} } from './shape-check.js';`,
    "import type { ReceivedServerFrame } from './ws-frames.js';",
    '',
    '/** Whether a value is a frame the gateway sends, as serverFrameSchema would accept it. */',
    `export const isServerFrame = ${body} as (value: unknown) => value is ReceivedServerFrame;`,
    '',
  ].join('\n');
}

/** Deep enough for real tool schemas; deeper (or recursive) parts get null rather than a stack overflow. */
const MAX_DEPTH = 8;

type Schema = Record<string, unknown>;

/**
 * A plausible value for a JSON Schema, deterministic: a default, const, example or first enum
 * value when the schema has one, else a value of its type; objects get their required
 * properties only, arrays one item. Used to call offered tools with arguments they accept.
 */
export function sampleArguments(schema: unknown): unknown {
  return sample(schema, 0);
}

function sample(schema: unknown, depth: number): unknown {
  if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return null;
  const s = schema as Schema;
  if ('default' in s) return s.default;
  if ('const' in s) return s.const;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const branches = s.anyOf ?? s.oneOf ?? s.allOf;
  if (Array.isArray(branches) && branches.length > 0) return sample(branches[0], depth + 1);

  switch (typeOf(s)) {
    case 'object':
      return sampleObject(s, depth);
    case 'array': {
      const length = Math.max(1, typeof s.minItems === 'number' ? s.minItems : 0);
      return Array.from({ length }, () => sample(s.items ?? {}, depth + 1));
    }
    case 'string':
      return sampleString(s);
    case 'integer':
      return Math.ceil(sampleNumber(s));
    case 'number':
      return sampleNumber(s);
    case 'boolean':
      return true;
    default:
      return null;
  }
}

function typeOf(s: Schema): string | undefined {
  // `["string", "null"]` means an optional string: the sample is the string.
  const type = Array.isArray(s.type) ? s.type.find((each) => each !== 'null') : s.type;
  if (typeof type === 'string') return type;
  return 'properties' in s ? 'object' : undefined;
}

function sampleObject(s: Schema, depth: number): Record<string, unknown> {
  const properties = (typeof s.properties === 'object' && s.properties !== null ? s.properties : {}) as Schema;
  const required = Array.isArray(s.required) ? s.required.filter((name): name is string => typeof name === 'string') : [];
  return Object.fromEntries(required.map((name) => [name, sample(properties[name] ?? {}, depth + 1)]));
}

const STRING_FORMATS: Record<string, string> = {
  'date-time': '2024-01-01T12:00:00Z',
  date: '2024-01-01',
  time: '12:00:00',
  email: 'user@example.com',
  uri: 'https://example.com',
  url: 'https://example.com',
  uuid: '00000000-0000-4000-8000-000000000000',
};

function sampleString(s: Schema): string {
  const byFormat = typeof s.format === 'string' ? STRING_FORMATS[s.format] : undefined;
  if (byFormat) return byFormat;
  // Tool descriptions often carry an example ('The expression, e.g. "2 + 3"'): a value the tool accepts.
  const example = typeof s.description === 'string' ? /e\.g\.,? "([^"]+)"/.exec(s.description)?.[1] : undefined;
  if (example) return example;
  const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
  const maxLength = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  return 'example'.padEnd(minLength, 'x').slice(0, maxLength);
}

function sampleNumber(s: Schema): number {
  const minimum = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : undefined;
  const maximum = typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - 1 : undefined;
  return minimum ?? (maximum !== undefined ? Math.min(1, maximum) : 1);
}

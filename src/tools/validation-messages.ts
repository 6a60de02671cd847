import type { ErrorObject } from 'ajv';

/** More than this and the model is better served by fixing the first ones. */
const MAX_MESSAGES = 8;

/**
 * Turns Ajv's errors into sentences a model can act on: `"city" is required`,
 * `unexpected property "colour"`, `"days" must be integer`. Paths name properties the way the
 * model wrote them (`address.city`, `stops[2]`), never JSON pointers.
 */
export function describeValidationErrors(errors: ErrorObject[]): string {
  const combinators = errors.filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf');
  const isInside = (error: ErrorObject, parent: ErrorObject) => error.schemaPath.startsWith(`${parent.schemaPath}/`);
  // Errors of the branches of an anyOf are folded into one sentence about the anyOf.
  const topLevel = errors.filter((error) => !combinators.some((parent) => parent !== error && isInside(error, parent)));

  const messages: string[] = [];
  for (const error of topLevel) {
    const branches = errors.filter((each) => combinators.includes(error) && isInside(each, error));
    const message = describe(error, branches);
    if (!messages.includes(message)) messages.push(message);
  }
  const shown = messages.slice(0, MAX_MESSAGES).join('; ');
  return messages.length > MAX_MESSAGES ? `${shown}; and ${messages.length - MAX_MESSAGES} more problems` : shown;
}

function describe(error: ErrorObject, branches: ErrorObject[]): string {
  const path = propertyPath(error.instancePath);
  const subject = path ? `"${path}"` : 'arguments';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `"${joinPath(path, String(params.missingProperty))}" is required`;
    case 'additionalProperties':
      return `unexpected property "${joinPath(path, String(params.additionalProperty))}"`;
    case 'unevaluatedProperties':
      return `unexpected property "${joinPath(path, String(params.unevaluatedProperty))}"`;
    case 'type':
      return `${subject} must be ${String(params.type).split(',').join(' or ')}`;
    case 'enum':
      return `${subject} must be one of ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
    case 'const':
      return `${subject} must be ${JSON.stringify(params.allowedValue)}`;
    case 'anyOf':
    case 'oneOf': {
      const sameSpot = branches.filter((branch) => branch.instancePath === error.instancePath);
      if (sameSpot.length > 0 && sameSpot.length === branches.length && sameSpot.every((branch) => branch.keyword === 'type')) {
        const types = sameSpot.flatMap((branch) => String((branch.params as { type: unknown }).type).split(','));
        return `${subject} must be ${[...new Set(types)].join(' or ')}`;
      }
      const reasons = [...new Set(branches.map((branch) => describe(branch, [])))].slice(0, 3);
      return `${subject} does not match any allowed form${reasons.length ? ` (${reasons.join(' / ')})` : ''}`;
    }
    default:
      // Ajv's own wording reads well after a subject: "must be >= 1", "must NOT have more than 5 characters".
      return `${subject} ${error.message ?? 'is not valid'}`;
  }
}

/** `/stops/2/city` → `stops[2].city`; `~1` and `~0` are JSON pointer escapes. */
export function propertyPath(instancePath: string): string {
  if (!instancePath) return '';
  return instancePath
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, segment) => (/^\d+$/.test(segment) ? `${path}[${segment}]` : joinPath(path, segment)), '');
}

function joinPath(path: string, property: string): string {
  return path ? `${path}.${property}` : property;
}

/**
 * Checks of a JSON value's shape, the few that the protocol's schemas use: what the client runs
 * on what the server sends instead of zod, whose runtime alone would be most of a browser
 * bundle. server-frame-check.generated.ts is written with these from the zod schemas.
 */
export type ShapeCheck = (value: unknown) => boolean;

export const unknown: ShapeCheck = () => true;
export const string: ShapeCheck = (value) => typeof value === 'string';
export const boolean: ShapeCheck = (value) => typeof value === 'boolean';

/** A number; `integer`: a safe integer; `minimum`: at least (`exclusive`: above) it. */
export function number(options: { integer?: boolean; minimum?: number; exclusive?: boolean } = {}): ShapeCheck {
  return (value) =>
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (!options.integer || Number.isSafeInteger(value)) &&
    (options.minimum === undefined || (options.exclusive ? value > options.minimum : value >= options.minimum));
}

export const oneOf =
  (...values: unknown[]): ShapeCheck =>
  (value) =>
    values.includes(value);

export const anyOf =
  (...checks: ShapeCheck[]): ShapeCheck =>
  (value) =>
    checks.some((check) => check(value));

export const nullable =
  (check: ShapeCheck): ShapeCheck =>
  (value) =>
    value === null || check(value);

const OPTIONAL = Symbol('optional');

/** A field that may be absent (or undefined); any other field must be there, as zod has it. */
export const optional = (check: ShapeCheck): ShapeCheck => Object.assign((value: unknown) => value === undefined || check(value), { [OPTIONAL]: true });

export const array =
  (check: ShapeCheck): ShapeCheck =>
  (value) =>
    Array.isArray(value) && value.every(check);

/** An object with these fields; others are let through (a newer server may send more). */
export const object =
  (fields: Record<string, ShapeCheck>): ShapeCheck =>
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.entries(fields).every(([name, check]) => (Object.hasOwn(value, name) ? check((value as Record<string, unknown>)[name]) : OPTIONAL in check));

/**
 * The base of every error Switchyard throws on purpose: a stable `code` that callers decide on
 * (never the message's wording), and structured fields in the subclasses for the rest. The
 * HTTP and websocket layers map codes in one place each (api/error-handler.ts,
 * gateway/client-session.ts).
 *
 * Detection goes through markers, as vercel/ai's `AISDKError` does: `instanceof` fails when the
 * error comes from another copy of the module (two installs of the package, jest's module
 * registry, a vm context), a symbol from the global registry does not. Each instance carries the
 * marker of each class of its chain, named after the class (so two of our error classes never
 * share a name), so `StartupError.isInstance` also holds for a `ConfigError` and
 * `SwitchyardError.isInstance` for all of them.
 */
export abstract class SwitchyardError<Code extends string = string> extends Error {
  abstract readonly code: Code;

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    for (let prototype: object | null = new.target.prototype; prototype && prototype !== Error.prototype; prototype = Object.getPrototypeOf(prototype)) {
      // Not enumerable: logs and JSON show the error as before.
      Object.defineProperty(this, markerOf((prototype as { constructor: { name: string } }).constructor.name), { value: true });
    }
  }

  /** Whether `error` is this class (or one of its subclasses), from whichever copy of the module. */
  static isInstance<T>(this: { readonly prototype: T; readonly name: string }, error: unknown): error is T {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[markerOf(this.name)] === true;
  }
}

function markerOf(className: string): symbol {
  return Symbol.for(`switchyard.error.${className}`);
}

/**
 * Whether `error` is one of ours with this code, from whichever copy of the module. Another
 * library's `code` of the same spelling (Node's errno, pg's SQLSTATE) is not ours: it never matches.
 */
export function isCoded<Code extends string>(error: unknown, code: Code): error is SwitchyardError<Code> {
  return SwitchyardError.isInstance(error) && error.code === code;
}

/**
 * The message of anything thrown, the one way to read it: an error's message, a string as it
 * is, anything else as JSON (or `String` when it has none). Duck-typed rather than
 * `instanceof Error`: errors from Node's own fetch (undici) come from another realm under jest
 * and in some embedders. Never throws, whatever was thrown (a circular object, one without a
 * prototype).
 */
export function errorMessage(thrown: unknown): string {
  if (typeof thrown === 'string') return thrown;
  try {
    if (typeof thrown === 'object' && thrown !== null) {
      const { message } = thrown as { message?: unknown };
      if (typeof message === 'string') return message;
      const json = jsonOf(thrown);
      if (json !== undefined) return json;
    }
    return String(thrown);
  } catch {
    // A getter or a toString that throws, an object without a prototype.
    return Object.prototype.toString.call(thrown);
  }
}

function jsonOf(value: object): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    // Circular, or holding a BigInt.
    return undefined;
  }
}

/** Anything thrown as an Error (graphile-worker's coerceError): itself, or one with its message. */
export function coerceError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(errorMessage(thrown));
}

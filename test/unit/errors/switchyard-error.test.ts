import { AppError } from '../../../src/errors/app-error';
import { BackendUnavailableError } from '../../../src/errors/backend-unavailable';
import { ListenFailedError } from '../../../src/errors/listen-failure';
import { StartupError, startFailureLine } from '../../../src/errors/startup-error';
import { ToolLoadError } from '../../../src/tools/tool-errors';
import { coerceError, errorMessage, isCoded, SwitchyardError } from '../../../src/errors/switchyard-error';

/** The module as a second copy of the package would have it: classes of its own. */
function secondCopyOfAppError(): typeof AppError {
  let copy: typeof AppError | undefined;
  jest.isolateModules(() => {
    copy = (require('../../../src/errors/app-error') as typeof import('../../../src/errors/app-error')).AppError;
  });
  return copy!;
}

describe('SwitchyardError.isInstance', () => {
  it('knows an error of another copy of the module, which instanceof does not', () => {
    const CopiedAppError = secondCopyOfAppError();
    expect(CopiedAppError).not.toBe(AppError);
    const copied = new CopiedAppError('not_found', 'conversation not found');
    expect(copied instanceof AppError).toBe(false);
    expect(AppError.isInstance(copied)).toBe(true);
    expect(SwitchyardError.isInstance(copied)).toBe(true);
    expect(CopiedAppError.isInstance(new AppError('internal', 'x'))).toBe(true);
  });

  it('holds for the class and its subclasses, not for siblings or parents', () => {
    const listen = new ListenFailedError('PORT 80 on 0.0.0.0 is not allowed');
    expect(StartupError.isInstance(listen)).toBe(true);
    expect(ListenFailedError.isInstance(listen)).toBe(true);
    expect(SwitchyardError.isInstance(listen)).toBe(true);
    expect(ListenFailedError.isInstance(new StartupError('locked'))).toBe(false);
    expect(AppError.isInstance(listen)).toBe(false);
    expect(StartupError.isInstance(new AppError('internal', 'x'))).toBe(false);
  });

  it('holds for nothing that is not ours', () => {
    for (const value of [new Error('x'), Object.assign(new Error('x'), { code: 'not_found' }), { code: 'not_found', message: 'x' }, 'x', null, undefined, 42]) {
      expect(SwitchyardError.isInstance(value)).toBe(false);
    }
  });

  it('leaves the error as it was for logs and JSON: no enumerable marker', () => {
    const error = new AppError('not_found', 'conversation not found');
    expect(JSON.parse(JSON.stringify(error))).toEqual({ code: 'not_found', name: 'AppError' });
    expect(Object.getOwnPropertySymbols(error).every((symbol) => !Object.getOwnPropertyDescriptor(error, symbol)!.enumerable)).toBe(true);
    expect(error.name).toBe('AppError');
    expect(error.message).toBe('conversation not found');
    expect(error).toBeInstanceOf(Error);
  });
});

describe('isCoded', () => {
  it('matches an error of ours by its code', () => {
    expect(isCoded(new AppError('not_found', 'x'), 'not_found')).toBe(true);
    expect(isCoded(new AppError('not_found', 'x'), 'internal')).toBe(false);
    expect(isCoded(new BackendUnavailableError('redis', new Error('down')), 'backend_unavailable')).toBe(true);
    expect(isCoded(new StartupError('x'), 'startup')).toBe(true);
    expect(isCoded(new ListenFailedError('x'), 'listen_failed')).toBe(true);
  });

  it('matches across copies of the module', () => {
    expect(isCoded(new (secondCopyOfAppError())('conversation_busy', 'x'), 'conversation_busy')).toBe(true);
  });

  it("does not match other libraries' codes of the same spelling", () => {
    expect(isCoded(Object.assign(new Error('x'), { code: 'not_found' }), 'not_found')).toBe(false);
    expect(isCoded({ code: 'not_found' }, 'not_found')).toBe(false);
    expect(isCoded(undefined, 'not_found')).toBe(false);
  });
});

describe('errorMessage', () => {
  it("reads an error's message", () => {
    expect(errorMessage(new Error('boom'))).toBe('boom');
    expect(errorMessage(new AppError('not_found', 'conversation not found'))).toBe('conversation not found');
    expect(errorMessage(new Error(''))).toBe('');
  });

  it('reads the message of an error-like object from another realm', () => {
    expect(errorMessage({ name: 'TypeError', message: 'fetch failed' })).toBe('fetch failed');
  });

  it('takes a string as it is', () => {
    expect(errorMessage('boom')).toBe('boom');
    expect(errorMessage('')).toBe('');
  });

  it('writes any other object as JSON', () => {
    expect(errorMessage({ status: 500, reason: 'down' })).toBe('{"status":500,"reason":"down"}');
    expect(errorMessage([1, 'a'])).toBe('[1,"a"]');
  });

  it('writes null, undefined and primitives as String does', () => {
    expect(errorMessage(null)).toBe('null');
    expect(errorMessage(undefined)).toBe('undefined');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(false)).toBe('false');
    expect(errorMessage(Symbol('gone'))).toBe('Symbol(gone)');
    expect(errorMessage(10n)).toBe('10');
  });

  it('never throws, whatever was thrown', () => {
    const circular: Record<string, unknown> = { name: 'loop' };
    circular.self = circular;
    expect(errorMessage(circular)).toBe('[object Object]');
    const bare = Object.create(null) as Record<string, unknown>;
    bare.self = bare;
    expect(errorMessage(bare)).toBe('[object Object]');
    const hostile = {
      get message(): string {
        throw new Error('no');
      },
    };
    expect(errorMessage(hostile)).toBe('[object Object]');
  });
});

describe('coerceError', () => {
  it('keeps an Error and wraps anything else with its message', () => {
    const error = new Error('boom');
    expect(coerceError(error)).toBe(error);
    expect(coerceError('boom').message).toBe('boom');
    expect(coerceError({ status: 500 }).message).toBe('{"status":500}');
  });
});

describe('startFailureLine', () => {
  it('prints a refusal as its message, in one line, a tool file refusal among them', () => {
    expect(startFailureLine(new ToolLoadError('tools/a.json: "url": must not carry credentials'))).toBe('switchyard: tools/a.json: "url": must not carry credentials');
    expect(startFailureLine(new ToolLoadError('mcp.json: MCP server "x" failed to start; its stderr ended with: first\n  second\n'))).toBe(
      'switchyard: mcp.json: MCP server "x" failed to start; its stderr ended with: first | second',
    );
  });

  it('prints anything else as "could not start" and its message, never its stack', () => {
    const error = Object.assign(new Error("ENOTDIR: not a directory, mkdir '/data/db'"), { code: 'ENOTDIR' });
    expect(startFailureLine(error)).toBe("switchyard: could not start: ENOTDIR: not a directory, mkdir '/data/db'");
    expect(startFailureLine('plain text')).toBe('switchyard: could not start: plain text');
  });
});

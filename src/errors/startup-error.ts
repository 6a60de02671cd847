import { errorMessage, SwitchyardError } from './switchyard-error';

/** The codes of StartupError and its subclasses (each names what to fix). */
export type StartupErrorCode =
  'startup' | 'invalid_config' | 'listen_failed' | 'database_locked' | 'migration_changed' | 'redis_unavailable' | 'redis_prefix_taken' | 'tool_config' | 'models_file';

/**
 * A reason not to start that the operator can fix (a setting, a locked folder, a server that
 * does not answer, a changed migration). Entry points print its message as one line, no stack.
 */
export class StartupError extends SwitchyardError<StartupErrorCode> {
  readonly code: StartupErrorCode = 'startup';
}

/**
 * What a process that could not start prints: one line, never a stack. A refusal the operator
 * can fix says what to fix as it is; anything else (a folder that cannot be made, a file that
 * cannot be read) by its message, which names the path. A message of several lines (an MCP
 * server's stderr) is joined into one. Pure.
 */
export function startFailureLine(error: unknown): string {
  const message = StartupError.isInstance(error) ? error.message : `could not start: ${errorMessage(error)}`;
  return `switchyard: ${message.trim().replace(/\s*\n\s*/g, ' | ')}`;
}

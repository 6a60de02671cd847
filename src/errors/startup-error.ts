import { SwitchyardError } from './switchyard-error';

/** The codes of StartupError and its subclasses (each names what to fix). */
export type StartupErrorCode =
  | 'startup'
  | 'invalid_config'
  | 'listen_failed'
  | 'database_locked'
  | 'migration_changed'
  | 'redis_unavailable'
  | 'redis_prefix_taken';

/**
 * A reason not to start that the operator can fix (a setting, a locked folder, a server that
 * does not answer, a changed migration). Entry points print its message as one line, no stack.
 */
export class StartupError extends SwitchyardError<StartupErrorCode> {
  readonly code: StartupErrorCode = 'startup';
}

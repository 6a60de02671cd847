import { StartupError } from '../errors/startup-error';
import { SwitchyardError } from '../errors/switchyard-error';

/**
 * The two ways tools fail outside the outcome union: a configuration that cannot be loaded
 * (the service refuses to start) and an expected failure thrown by a builtin's `run`.
 */

/**
 * A tools directory, a tool file or an MCP server that cannot be loaded: a reason not to start.
 * The message names the file (or server) and the field, and is printed as it is.
 */
export class ToolLoadError extends StartupError {
  override readonly code = 'tool_config';

  constructor(message: string) {
    super(message);
    this.name = 'ToolLoadError';
  }
}

/**
 * An expected failure of a tool (`division_by_zero`, `invalid_time_zone`): reported with its
 * code and not retried unless it says so. Anything else a builtin throws counts as a retryable
 * `internal` failure.
 */
export class ToolExecutionError extends SwitchyardError {
  readonly retryable: boolean;

  constructor(
    readonly code: string,
    message: string,
    options: { retryable?: boolean } = {},
  ) {
    super(message);
    this.name = 'ToolExecutionError';
    this.retryable = options.retryable ?? false;
  }
}

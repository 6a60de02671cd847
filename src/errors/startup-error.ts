/**
 * A reason not to start that the operator can fix (a setting, a locked folder, a server that
 * does not answer, a changed migration). Entry points print its message as one line, no stack.
 */
export class StartupError extends Error {
  readonly code: string = 'startup';
}

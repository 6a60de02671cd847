import { StartupError } from './startup-error';

export class ListenFailedError extends StartupError {
  override readonly code = 'listen_failed';
}

/**
 * Why a server could not listen, as the one line that names the setting to change: a port in
 * use, a port not allowed, an address not on this machine or a name that does not resolve. Anything else is returned as it is.
 */
export function describeListenFailure(error: unknown, port: number, host: string): unknown {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'EADDRINUSE':
      return new ListenFailedError(`PORT ${port} on ${host} is already in use (another Switchyard, or another program): stop it, or set PORT to a free port (0 picks one)`);
    case 'EACCES':
      return new ListenFailedError(`PORT ${port} on ${host} is not allowed to this user (ports below 1024 need privileges): set PORT to another port`);
    case 'EADDRNOTAVAIL':
      return new ListenFailedError(`HOST ${host} is not an address of this machine: set HOST to one of its addresses (127.0.0.1, 0.0.0.0)`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ListenFailedError(`HOST ${host} does not resolve: set HOST to an address of this machine (127.0.0.1, 0.0.0.0)`);
    default:
      return error;
  }
}

let loaded: typeof import('undici') | undefined;

/**
 * undici, loaded at its first use (a provider's first request, a worker's first webhook
 * delivery or agent) and kept: a process that makes neither does not load its modules at start.
 */
export const undici = (): typeof import('undici') => (loaded ??= require('undici') as typeof import('undici'));

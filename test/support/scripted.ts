import { randomBytes } from 'node:crypto';

/** A user message that makes the scripted model follow `scenario`. */
export const scripted = (scenario: unknown) => `[[scripted ${JSON.stringify(scenario)}]]`;

/**
 * The same after a marker, by default a random one: no two such messages are alike, and a test
 * finds its own among the requests the provider saw.
 */
export const markedScripted = (scenario: unknown, marker = randomBytes(4).toString('hex')) => `${marker} ${scripted(scenario)}`;

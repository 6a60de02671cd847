import { randomBytes } from 'node:crypto';

/** A short random suffix for Redis prefixes, schemas and names, so tests never collide. */
export const uniqueSuffix = () => randomBytes(5).toString('hex');

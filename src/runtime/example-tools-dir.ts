import path from 'node:path';

/**
 * The example tools `npm start` offers when TOOLS_DIR is not set (a client tool for the
 * playground); the CLI on the embedded database knows the same ones.
 */
export const EXAMPLE_TOOLS_DIR = path.join(__dirname, '..', '..', 'examples', 'tools');

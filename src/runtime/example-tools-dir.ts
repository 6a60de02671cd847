import path from 'node:path';
import { projectRoot } from '../config/project-root';

/**
 * The example tools `npm start` offers when TOOLS_DIR is not set (a client tool for the
 * playground); the CLI on the embedded database knows the same ones.
 */
export const EXAMPLE_TOOLS_DIR = path.join(projectRoot(__dirname), 'examples', 'tools');

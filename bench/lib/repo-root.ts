import path from 'node:path';

/** The repository root: child processes run from here so that `--import tsx` resolves. */
export const REPO_ROOT = path.resolve(__dirname, '../..');

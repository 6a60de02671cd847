import fs from 'node:fs';
import path from 'node:path';

/**
 * The project's root: the nearest folder above `from` holding package.json and migrations/ (as
 * the image's /app does too), whether the code runs from its sources (src/…) or compiled
 * (dist/src/…), which sit at different depths.
 */
export function projectRoot(from: string): string {
  for (let dir = from; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'migrations'))) return dir;
  }
  throw new Error(`no project root (package.json beside migrations/) above ${from}`);
}

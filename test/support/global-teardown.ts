import { rmSync } from 'node:fs';
import { COMPILE_CACHE_DIR } from './processes';
import { dropTemplateDatabases } from './template-database';

/** Once per run, after the last test file: drops the template databases and removes the processes' compile cache. */
export default async function globalTeardown(): Promise<void> {
  await dropTemplateDatabases();
  const compileCache = process.env[COMPILE_CACHE_DIR];
  if (compileCache) rmSync(compileCache, { recursive: true, force: true });
}

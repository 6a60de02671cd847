import { rmSync } from 'node:fs';
import { PACK_DIR } from './packed-tarball';
import { COMPILE_CACHE_DIR } from './processes';
import { dropTemplateDatabases } from './template-database';

/** Once per run, after the last test file: drops the template databases and removes the processes' compile cache and the packed tarballs. */
export default async function globalTeardown(): Promise<void> {
  await dropTemplateDatabases();
  for (const variable of [COMPILE_CACHE_DIR, PACK_DIR]) {
    const dir = process.env[variable];
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

import { createTemplateDatabases } from './template-database';

/** Once per run, before any test file that needs PostgreSQL: the migrated template databases (PostgreSQL and PGlite). */
export default async function globalSetup(): Promise<void> {
  await createTemplateDatabases();
}

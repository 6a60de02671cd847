import { createTemplateDatabase } from './template-database';

/** Once per run, before any test file that needs PostgreSQL: the migrated template database. */
export default async function globalSetup(): Promise<void> {
  await createTemplateDatabase();
}

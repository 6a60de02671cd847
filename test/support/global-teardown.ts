import { dropTemplateDatabase } from './template-database';

/** Once per run, after the last test file: drops the template database. */
export default async function globalTeardown(): Promise<void> {
  await dropTemplateDatabase();
}

import { dropTemplateDatabases } from './template-database';

/** Once per run, after the last test file: drops the template databases. */
export default async function globalTeardown(): Promise<void> {
  await dropTemplateDatabases();
}

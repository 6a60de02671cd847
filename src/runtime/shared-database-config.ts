import { loadConfig, type Config } from '../config/config';
import { StartupError } from '../errors/startup-error';

/**
 * The configuration of an entry point that runs beside others (`npm run api`, `npm run worker`):
 * they meet in one PostgreSQL, so the embedded database, which only one process may open, is
 * refused at start rather than at the second process.
 */
export function loadSharedDatabaseConfig(command: string): Config {
  const config = loadConfig();
  if (!config.DATABASE_URL) throw new StartupError(`${command} shares the database with other processes: set DATABASE_URL to a PostgreSQL server`);
  return config;
}

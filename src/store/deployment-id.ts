import type { Queryable } from './db';

/**
 * This database's deployment id (migration 0013 makes it once): what a process claims its
 * REDIS_PREFIX with, so that two databases never share one prefix on one Redis.
 */
export async function readDeploymentId(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM deployment');
  const id = rows[0]?.id;
  if (!id) throw new Error('the deployment table has no row: migration 0013 did not run');
  return id;
}

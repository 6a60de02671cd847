import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Where `npm start` keeps the ADMIN_TOKEN it made (docs/API.md, "Users and auth"). */
export const devAdminTokenFile = (dataDir: string) => path.join(dataDir, 'dev-admin-token');

/**
 * The ADMIN_TOKEN of `npm start` when none is set: made on first start and kept in
 * DATA_DIR/dev-admin-token (mode 0600), so that later starts use the same one and the CLI's
 * admin commands, which cannot open the embedded database while the service holds it, go
 * through the running service's admin routes with it.
 */
export function ensureDevAdminToken(dataDir: string): string {
  const saved = savedDevAdminToken(dataDir);
  if (saved) return saved;
  const token = `sya_${randomBytes(32).toString('base64url')}`;
  const file = devAdminTokenFile(dataDir);
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return token;
}

/**
 * The admin token a CLI command uses: `--key`, else ADMIN_TOKEN, else the one `npm start` keeps
 * in DATA_DIR. Undefined when none is found.
 */
export function adminTokenForCli(flag: string | undefined, env: NodeJS.ProcessEnv, dataDir: string): string | undefined {
  return flag || env.ADMIN_TOKEN || savedDevAdminToken(dataDir);
}

function savedDevAdminToken(dataDir: string): string | undefined {
  const file = devAdminTokenFile(dataDir);
  return (fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim()) || undefined;
}

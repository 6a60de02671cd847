import fs from 'node:fs';
import path from 'node:path';

export interface DevKeyUsers {
  findUserByApiKey(key: string): Promise<{ userId: string } | null>;
  createUserWithKey(name: string): Promise<{ id: string; apiKey: string }>;
}

/**
 * The dev user of `npm start`: made on first start, its key stored hashed like any other and
 * kept in DATA_DIR/dev-api-key (mode 0600) so later starts print the same key.
 */
export async function ensureDevApiKey(users: DevKeyUsers, dataDir: string): Promise<{ apiKey: string; created: boolean }> {
  const saved = savedDevApiKey(dataDir);
  if (saved && (await users.findUserByApiKey(saved))) return { apiKey: saved, created: false };
  const user = await users.createUserWithKey('dev');
  const file = devKeyFile(dataDir);
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, `${user.apiKey}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return { apiKey: user.apiKey, created: true };
}

/**
 * The key a CLI command talks to the API with: `--key`, else SWITCHYARD_API_KEY, else the dev
 * user's key that `npm start` keeps in DATA_DIR (so the commands of docs/API.md work as written
 * against the embedded defaults). Undefined when none is found.
 */
export function apiKeyForCli(flag: string | undefined, env: NodeJS.ProcessEnv, dataDir: string): string | undefined {
  if (flag) return flag;
  if (env.SWITCHYARD_API_KEY) return env.SWITCHYARD_API_KEY;
  return savedDevApiKey(dataDir);
}

const devKeyFile = (dataDir: string) => path.join(dataDir, 'dev-api-key');

function savedDevApiKey(dataDir: string): string | undefined {
  const file = devKeyFile(dataDir);
  return (fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim()) || undefined;
}

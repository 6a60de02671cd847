import { startChild, type RunningChild } from './child-process';

export interface ScriptedModelProcess {
  /** Base URL including `/v1`. */
  url: string;
  process: RunningChild;
}

/**
 * The scripted model in a process of its own (`npm run scripted-model`), shared by the whole
 * run: Switchyard's workers and the direct-SDK baselines stream from the same server, and it
 * never competes for an event loop with the service or the bench clients.
 */
export async function startScriptedModelProcess(logDir: string): Promise<ScriptedModelProcess> {
  const child = await startChild({
    name: 'scripted-model',
    entry: 'workers/scripted-model.ts',
    env: { PORT: '0', HOST: '127.0.0.1' },
    logDir,
    ready: { stdout: /listening on (http\S+)/ },
  });
  return { url: child.match![1]!, process: child };
}

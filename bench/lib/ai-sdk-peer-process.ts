import { connectRedis, dropRedisKeys, REDIS_URL } from './backing-services';
import { startChild } from './child-process';
import type { RunContext } from './run-context';

export interface AiSdkPeer {
  /** Base URL of the chat route's server (POST /api/chat). */
  url: string;
  pid: number;
  /** Stops the server and drops its resumable-stream keys. */
  stop(): Promise<void>;
}

/**
 * Starts the AI SDK + resumable-stream peer (bench/baselines/ai-sdk-resumable-server.ts) in its
 * own process, on the run's scripted model and Redis, its keys under `<run prefix>-<name>`.
 */
export async function startAiSdkPeer(context: RunContext, name: string): Promise<AiSdkPeer> {
  const keyPrefix = `${context.redisPrefix}-${name}`;
  const server = await startChild({
    name,
    entry: 'bench/baselines/ai-sdk-resumable-server.ts',
    env: { PORT: '0', LLM_BASE_URL: context.scriptedModelUrl, REDIS_URL, KEY_PREFIX: keyPrefix },
    logDir: context.logDir,
    ready: { stdout: /listening on (\d+)/ },
  });
  const stop = async () => {
    unregister();
    await server.stop();
    const redis = connectRedis();
    try {
      await dropRedisKeys(redis, `${keyPrefix}:`);
    } finally {
      redis.disconnect();
    }
  };
  const unregister = context.registerCleanup(stop);
  return { url: `http://127.0.0.1:${server.match![1]}`, pid: server.pid, stop };
}

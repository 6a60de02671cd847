import { createConfiguredLogger } from '../src/logging/logger';
import { allInOneConfig } from '../src/runtime/all-in-one-config';
import { describeStores } from '../src/runtime/describe-stores';
import { ensureDevAdminToken } from '../src/runtime/dev-admin-token';
import { ensureDevApiKey } from '../src/runtime/dev-api-key';
import { EXAMPLE_TOOLS_DIR } from '../src/runtime/example-tools-dir';
import { createResources } from '../src/runtime/resources';
import { CLOSE_MARGIN_MS, runMain, startInSteps } from '../src/runtime/run-main';
import { startApi } from '../src/runtime/start-api';
import { startWorker } from '../src/runtime/start-worker';
import { startScriptedModel } from '../src/scripted-model/scripted-model-server';
import { buildPlayground } from '../src/playground/build';

/** `npm start`: API, gateway and workers in one process, on the embedded defaults. */
runMain(() =>
  startInSteps(async (opened) => {
    const defaults = { TOOLS_DIR: EXAMPLE_TOOLS_DIR, LOG_FORMAT: 'pretty' };
    const plain = allInOneConfig(process.env, defaults);
    // An unset ADMIN_TOKEN is made and kept in DATA_DIR, for the CLI's admin commands (docs/API.md).
    const devAdminToken = plain.ADMIN_TOKEN ? undefined : ensureDevAdminToken(plain.DATA_DIR);
    const config = devAdminToken ? allInOneConfig({ ...process.env, ADMIN_TOKEN: devAdminToken }, defaults) : plain;
    const logger = createConfiguredLogger(config);
    // The service runs without its playground rather than not at all.
    await buildPlayground(config.PLAYGROUND_DIR).catch((error: unknown) => logger.warn({ err: error }, 'the playground could not be built; / will say so'));
    const scripted = config.LLM_BASE_URL ? undefined : opened(await startScriptedModel());
    const resources = opened(await createResources(config, logger));
    // The API first: a port in use stops the start before the workers take any job.
    const api = opened(await startApi(resources));
    const worker = opened(await startWorker(resources, { withHealthServer: false, ...(scripted ? { providerUrl: scripted.url } : {}) }));
    const { apiKey, created } = await ensureDevApiKey(resources.users, config.DATA_DIR);
    const stores = describeStores(resources);
    process.stdout.write(
      banner({
        url: api.url,
        apiKey,
        created,
        devAdminToken: devAdminToken !== undefined,
        model: scripted ? `the scripted model at ${scripted.url}` : config.LLM_BASE_URL!,
        ...stores,
      }),
    );
    return {
      closeTimeoutMs: config.SHUTDOWN_GRACE_MS + CLOSE_MARGIN_MS,
      async close() {
        await api.close();
        await worker.close();
        await resources.close();
        await scripted?.close();
      },
    };
  }),
);

function banner(input: { url: string; apiKey: string; created: boolean; devAdminToken: boolean; model: string; redis: string; database: string }): string {
  const ws = input.url.replace(/^http/, 'ws');
  return `
Switchyard is running at ${input.url}  (model: ${input.model})
Redis: ${input.redis}
Database: ${input.database}
Playground: open ${input.url}/ in a browser and paste the dev API key
Dev API key${input.created ? ' (new; kept in DATA_DIR/dev-api-key)' : ''}: ${input.apiKey}
Admin token: ${input.devAdminToken ? "kept in DATA_DIR/dev-admin-token (mode 0600); the CLI's users and keys commands use it" : 'ADMIN_TOKEN, as set'}

Try it (bash):
  export SY_KEY=${input.apiKey}
  CONV=$(curl -s ${input.url}/v1/conversations -H "Authorization: Bearer $SY_KEY" -H 'Content-Type: application/json' -d '{"title":"hello"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).id')
  TURN=$(curl -s ${input.url}/v1/conversations/$CONV/turns -H "Authorization: Bearer $SY_KEY" -H 'Content-Type: application/json' -d '{"content":"Hello there"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).turnId')
  curl -sN ${input.url}/v1/turns/$TURN/events -H "Authorization: Bearer $SY_KEY"     # the turn's events (SSE)
  curl -s ${input.url}/v1/conversations/$CONV -H "Authorization: Bearer $SY_KEY"     # the stored messages

Watch a conversation over the websocket (${ws}/v1/ws), in another terminal:
  npm run cli -- watch $CONV --url ${input.url} --key $SY_KEY
`;
}

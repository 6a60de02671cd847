import { createConfiguredLogger } from '../src/logging/logger';
import { describeStores } from '../src/runtime/describe-stores';
import { createResources } from '../src/runtime/resources';
import { CLOSE_MARGIN_MS, runMain, startInSteps } from '../src/runtime/run-main';
import { loadSharedDatabaseConfig } from '../src/runtime/shared-database-config';
import { startApi } from '../src/runtime/start-api';

/** `npm run api`: the HTTP API and websocket gateway, without workers. */
runMain(() =>
  startInSteps(async (opened) => {
    const config = loadSharedDatabaseConfig('npm run api');
    const logger = createConfiguredLogger(config);
    // Tools run on the workers: this process starts no MCP server.
    const resources = opened(await createResources(config, logger, { runsTools: false, serviceName: 'switchyard-api' }));
    const api = await startApi(resources);
    logger.info({ url: api.url, ...describeStores(resources) }, 'api started');
    return {
      closeTimeoutMs: config.SHUTDOWN_GRACE_MS + CLOSE_MARGIN_MS,
      async close() {
        await api.close();
        await resources.close();
      },
    };
  }),
);

import { createConfiguredLogger } from '../src/logging/logger';
import { describeStores } from '../src/runtime/describe-stores';
import { createResources } from '../src/runtime/resources';
import { CLOSE_MARGIN_MS, runMain, startInSteps } from '../src/runtime/run-main';
import { loadSharedDatabaseConfig } from '../src/runtime/shared-database-config';
import { startWorker } from '../src/runtime/start-worker';
import { startScriptedModel } from '../src/scripted-model/scripted-model-server';

/** `npm run worker`: turn workers, with /healthz and /metrics on PORT. */
runMain(() =>
  startInSteps(async (opened) => {
    const config = loadSharedDatabaseConfig('npm run worker');
    const logger = createConfiguredLogger(config);
    // Without a provider configured, a worker talks to a scripted model of its own.
    const scripted = config.LLM_BASE_URL ? undefined : opened(await startScriptedModel());
    const resources = opened(await createResources(config, logger, { runsTools: true, serviceName: 'switchyard-worker' }));
    const worker = await startWorker(resources, { withHealthServer: true, ...(scripted ? { providerUrl: scripted.url } : {}) });
    logger.info({ port: worker.port, ...describeStores(resources) }, 'worker started');
    return {
      closeTimeoutMs: config.SHUTDOWN_GRACE_MS + CLOSE_MARGIN_MS,
      async close() {
        await worker.close();
        await resources.close();
        await scripted?.close();
      },
    };
  }),
);

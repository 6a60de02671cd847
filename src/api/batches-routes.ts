import type { Config } from '../config/config';
import type { Metrics } from '../metrics/metrics';
import { OpenAiBatchesRepository } from '../openai/store/openai-batches-repository';
import type { Db } from '../store/db';
import { batchesRouter, type BatchesRouterDeps } from './batches-router';
import { batchPaths } from './contract/batches-contract';
import { LiveSseStreams, type LiveSseOptions } from './live-sse';
import type { RouteFamily } from './route-family';
import { SubmissionSlots } from './submission-slots';
import { usableToolsOf, type UserToolsNeeds } from './usable-tools';
import { userChecks, type UserCheckNeeds } from './user-checks';

interface BatchesRoutesNeeds extends UserCheckNeeds, UserToolsNeeds, Pick<BatchesRouterDeps, 'batches' | 'startBatch' | 'followBatch' | 'spoolDir' | 'agentReferences'> {
  config: Pick<Config, 'MAX_BATCH_BYTES' | 'MAX_BATCH_JSON_BYTES' | 'MAX_BATCH_ITEMS' | 'MAX_BATCH_SUBMISSIONS_IN_FLIGHT'>;
  metrics: Pick<Metrics, 'countBatchSubmissionsWith'>;
  /** Where OpenAI batches keep their records: a batch that has one is not retried here. */
  db: Db;
  batchRunner: BatchesRouterDeps['runner'];
  sse: LiveSseOptions;
}

/**
 * `/v1/batches` (docs/API.md, "Batches"). Before the API's body parsers: a batch may be JSONL,
 * and larger than MAX_BODY_BYTES.
 */
export const batchesRoutes: RouteFamily<BatchesRoutesNeeds> = {
  stage: 'own-body',
  openApi: { tag: { name: 'Batches' }, paths: batchPaths },
  mount: (app, needs) => {
    const { config } = needs;
    const submissionSlots = new SubmissionSlots(config.MAX_BATCH_SUBMISSIONS_IN_FLIGHT);
    needs.metrics.countBatchSubmissionsWith(() => submissionSlots.inUse);
    const streams = new LiveSseStreams(needs.sse);
    app.use(
      '/v1/batches',
      ...userChecks(needs),
      batchesRouter({
        batches: needs.batches,
        openAiBatches: new OpenAiBatchesRepository(needs.db),
        startBatch: needs.startBatch,
        runner: needs.batchRunner,
        followBatch: needs.followBatch,
        streams,
        usableTools: usableToolsOf(needs),
        agentReferences: needs.agentReferences,
        maxBatchBytes: config.MAX_BATCH_BYTES,
        maxBatchJsonBytes: config.MAX_BATCH_JSON_BYTES,
        maxBatchItems: config.MAX_BATCH_ITEMS,
        submissionSlots,
        spoolDir: needs.spoolDir,
      }),
    );
    return { endStreams: () => streams.endAll() };
  },
};

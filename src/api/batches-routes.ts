import type { ApiDeps } from './api-deps';
import { batchesRouter } from './batches-router';
import { batchPaths } from './contract/batches-contract';
import type { RouteFamily } from './route-family';
import { userChecks } from './user-checks';

/**
 * `/v1/batches` (docs/API.md, "Batches"). Before the API's body parsers: a batch may be JSONL,
 * and larger than MAX_BODY_BYTES.
 */
export const batchesRoutes: RouteFamily<ApiDeps> = {
  stage: 'own-body',
  openApi: { tag: { name: 'Batches' }, paths: batchPaths },
  mount: (app, deps) => {
    app.use(
      '/v1/batches',
      ...userChecks(deps),
      batchesRouter({
        batches: deps.batches,
        openAiBatches: deps.openAiBatches,
        startBatch: deps.startBatch,
        runner: deps.batchRunner,
        followBatch: deps.followBatch,
        streams: deps.batchStreams,
        usableTools: { tools: deps.tools, userAllowedTools: deps.userAllowedTools },
        maxBatchBytes: deps.maxBatchBytes,
        maxBatchJsonBytes: deps.maxBatchJsonBytes,
        maxBatchItems: deps.maxBatchItems,
        submissionSlots: deps.batchSubmissionSlots,
        spoolDir: deps.batchSpoolDir,
      }),
    );
  },
};

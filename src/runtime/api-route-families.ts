import { adminRoutes } from '../api/admin-routes';
import { agentsRoutes } from '../agents/routes/agents-routes';
import { schedulesRoutes } from '../schedules/routes/schedules-routes';
import { approvalsRoutes } from '../api/approvals-routes';
import { batchesRoutes } from '../api/batches-routes';
import { modelsRoutes } from '../api/models-routes';
import { browserRoutes } from '../api/browser-routes';
import { conversationsRoutes } from '../api/conversations-routes';
import { keysRoutes } from '../api/keys-routes';
import { operationsRoutes } from '../api/operations-routes';
import type { AppAddedNeeds, RouteFamily } from '../api/route-family';
import { toolsRoutes } from '../api/tools-routes';
import { turnsRoutes } from '../api/turns-routes';
import { webhooksRoutes } from '../api/webhooks-routes';
import { openAiRoutes } from '../openai/routes/openai-routes';
import { adminUsageRoutes, usageRoutes } from '../usage/routes/usage-routes';
import type { ApiResources } from './api-resources';

/**
 * Every route family the API serves, in the order GET /openapi.json lists them; the app mounts
 * each at its stage, in this order within the stage. Typed against the API's resources: a
 * family needing what they do not hold does not compile.
 */
export const apiRouteFamilies: readonly RouteFamily<ApiResources & AppAddedNeeds>[] = [
  conversationsRoutes,
  turnsRoutes,
  agentsRoutes,
  schedulesRoutes,
  toolsRoutes,
  modelsRoutes,
  usageRoutes,
  approvalsRoutes,
  batchesRoutes,
  webhooksRoutes,
  keysRoutes,
  browserRoutes,
  openAiRoutes,
  adminUsageRoutes,
  adminRoutes,
  operationsRoutes,
];

import { openAiRoutes } from '../openai/routes/openai-routes';
import { adminRoutes } from './admin-routes';
import type { ApiDeps } from './api-deps';
import { approvalsRoutes } from './approvals-routes';
import { batchesRoutes } from './batches-routes';
import { browserRoutes } from './browser-routes';
import { conversationsRoutes } from './conversations-routes';
import { operationsRoutes, type OperationsNeeds } from './operations-routes';
import type { RouteFamily } from './route-family';
import { toolsRoutes } from './tools-routes';
import { turnsRoutes } from './turns-routes';
import { webhooksRoutes } from './webhooks-routes';

/**
 * Every route family the API serves, in the order GET /openapi.json lists them; the app mounts
 * each at its stage, in this order within the stage.
 */
export const apiRouteFamilies: readonly RouteFamily<ApiDeps & OperationsNeeds>[] = [
  conversationsRoutes,
  turnsRoutes,
  toolsRoutes,
  approvalsRoutes,
  batchesRoutes,
  webhooksRoutes,
  browserRoutes,
  openAiRoutes,
  adminRoutes,
  operationsRoutes,
];

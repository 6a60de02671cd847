import type { IRouter } from 'express';
import type { oas31, ZodOpenApiPathsObject, ZodOpenApiSchemaObject } from 'zod-openapi';

/**
 * Where the app mounts a family, in the order a request meets them (api/app.ts):
 * 1. `public`: before any check (health, metrics, the playground, GET /openapi.json);
 * 2. `own-body`: after the cross-origin check of `/v1` and `/api`, before the credentials and the
 *    JSON body every other route there gets: routes that read their own bodies (a JSONL batch, an
 *    upload) and check the user themselves (`userChecks`);
 * 3. `admin`: under `/v1/admin`, after ADMIN_TOKEN and the JSON body;
 * 4. `user`: under `/v1` and `/api`, after the user's credentials, the rate limit and the JSON
 *    body (MAX_CHAT_BODY_BYTES on `/api/chat`).
 */
export type RouteStage = 'public' | 'own-body' | 'admin' | 'user';

/** A family's part of GET /openapi.json (api/contract/openapi-document.ts). */
export interface RouteFamilyDocument {
  /** Its section; the document lists the sections, and their paths, in the order of the families. */
  tag: oas31.TagObject;
  /** Its operations by path, with the errors each answers. */
  paths: ZodOpenApiPathsObject;
  /** Schemas its answers share, named in `components.schemas`. */
  schemas?: Record<string, ZodOpenApiSchemaObject>;
}

/**
 * A family of routes (`/v1/turns`, the OpenAI dialect under `/openai/v1`, …) as the app mounts
 * it: the stage it belongs to, what it documents, and how it mounts its routes. `Needs` is what
 * it reads of the one resources object the app hands every family (runtime/api-resources.ts):
 * a family declares the fields it uses and is typed as seeing only those, so a new route is
 * written in its family alone.
 */
export interface RouteFamily<Needs> {
  stage: RouteStage;
  openApi: RouteFamilyDocument;
  /**
   * Mounts the family's routes on the app at their paths; what it returns is ended when the
   * server drains. A property rather than a method, so that TypeScript checks the resources
   * handed to the app hold what each family needs.
   */
  mount: (app: IRouter, needs: Needs) => MountedRoutes | void;
}

/** What a mounted family keeps open. */
export interface MountedRoutes {
  /** Ends its live streams (SSE), each after the last event it sent; readers resume elsewhere by their cursor. */
  endStreams(): void;
}

/** What the app adds to the resources it hands the families: every family's part of GET /openapi.json. */
export interface AppAddedNeeds {
  routeDocuments: readonly RouteFamilyDocument[];
}

import { keysPaths } from './contract/keys-contract';
import { keysRouter, type KeysRouterDeps } from './keys-router';
import type { RouteFamily } from './route-family';

/** `/v1/keys` (docs/API.md, "Users and auth"): the user's own API keys. */
export const keysRoutes: RouteFamily<KeysRouterDeps> = {
  stage: 'user',
  openApi: { tag: { name: 'Keys', description: 'Your API keys; these routes need the API key itself, not a session token.' }, paths: keysPaths },
  mount: (app, needs) => {
    app.use('/v1/keys', keysRouter({ users: needs.users, afterRevocation: needs.afterRevocation }));
  },
};

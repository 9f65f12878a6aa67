import Router from '@koa/router';
import { INTERACTION_PATH } from '../src/engine/configuration.ts';

/**
 * The login UI's mount point: the engine sends the browser to
 * `/ui/login/{uid}` when a user must sign in. The pages themselves arrive
 * with the browser sign-in work (issue 5); until then this path answers 404.
 */
export function interactionRouter(): Router {
  return new Router({ prefix: INTERACTION_PATH });
}

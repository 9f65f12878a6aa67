import Router from '@koa/router';
import type { Database } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import type { Principal } from '../domain/roles.ts';
import { getInstanceFeatures } from '../queries/features.ts';
import { setInstanceFeatures, type FeaturesInput } from '../commands/features.ts';
import { validator } from './validate.ts';
import { instanceFeaturesSchema } from './user-schemas.ts';

const parseFeatures = validator<FeaturesInput>(instanceFeaturesSchema);

/** `GET`, `PUT /v2/features/instance` (docs/api/features.md). */
export function featureRoutes(db: Database, announce: Announce): Router {
  const router = new Router();
  router.get('/v2/features/instance', async (ctx) => {
    ctx.body = await getInstanceFeatures(db, ctx.state.principal as Principal);
  });
  router.put('/v2/features/instance', async (ctx) => {
    const input = parseFeatures(ctx.request.body ?? {});
    ctx.body = await setInstanceFeatures(db, announce, ctx.state.principal as Principal, input);
  });
  return router;
}

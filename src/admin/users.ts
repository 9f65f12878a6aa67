import Router from '@koa/router';
import type { Database } from '../storage/database.ts';
import type { Principal } from '../domain/roles.ts';
import { getUser } from '../queries/get-user.ts';
import { actingOrgId } from './org-context.ts';

/** `GET /management/v1/users/{userId}` (SPEC 3.2). */
export function userRoutes(db: Database): Router {
  const router = new Router();
  router.get('/management/v1/users/:userId', async (ctx) => {
    const orgId = await actingOrgId(ctx, db);
    ctx.body = { user: await getUser(db, ctx.state.principal as Principal, orgId, ctx.params.userId!) };
  });
  return router;
}

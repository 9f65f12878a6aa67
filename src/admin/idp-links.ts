import Router from '@koa/router';
import type { Context } from 'koa';
import { NotFound } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { removeIdpLink } from '../commands/idp-links.ts';
import { managedUser } from '../queries/get-user.ts';
import type { Database } from '../storage/database.ts';
import { listUserLinks } from '../storage/idp-links.ts';
import { actingOrgId } from './org-context.ts';

const principal = (ctx: Context) => ctx.state.principal as Principal;

/** An upstream's id of a user: printable, no white space, as long as OIDC Core 2 allows a `sub` (255). */
const PROVIDED_ID = /^[^\s\p{Cc}]{1,255}$/u;

/** A user's identities at external providers (docs/api/idps.md). */
export function idpLinkRoutes(db: Database): Router {
  const router = new Router();
  router.param('providedUserId', (value, _ctx, next) => {
    if (!PROVIDED_ID.test(value) || !value.isWellFormed()) throw new NotFound('not found');
    return next();
  });
  router.post('/management/v1/users/:userId/links/_search', async (ctx) => {
    const orgId = await actingOrgId(ctx, db);
    const user = await managedUser(db, principal(ctx), orgId, ctx.params.userId!);
    const links = await listUserLinks(db, user.id);
    ctx.body = { details: { totalResult: String(links.length), viewTimestamp: new Date().toISOString() }, result: links };
  });
  router.delete('/management/v1/users/:userId/links/:idpId/:providedUserId', async (ctx) => {
    const orgId = await actingOrgId(ctx, db);
    const { userId, idpId, providedUserId } = ctx.params as Record<string, string>;
    ctx.body = await removeIdpLink(db, principal(ctx), orgId, { userId, idpId, providedUserId });
  });
  return router;
}

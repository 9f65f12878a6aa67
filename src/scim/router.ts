import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Database } from '../storage/database.ts';
import type { Logger } from '../logger.ts';
import type { Announce } from '../storage/invalidation.ts';
import { findOrg } from '../storage/orgs.ts';
import type { OrgSettings } from '../commands/setup-org.ts';
import type { TokenVerifier } from '../domain/tokens.ts';
import type { AuthThrottle } from '../security/auth-throttle.ts';
import type { EngineHolder } from '../engine/engine-holder.ts';
import { dpopProofCheck } from '../engine/dpop-resource-proofs.ts';
import { NotFound } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { assertMayManageUsers } from '../domain/permissions.ts';
import { isUserSchema } from '../domain/scim/user.ts';
import { authenticate } from '../admin/authenticate.ts';
import { throttledAuthentication } from '../admin/throttled.ts';
import { SCIM_CONTENT_TYPE, scimErrors } from './errors.ts';
import { scimBody } from './body.ts';
import { scimUserRoutes } from './users.ts';
import { userWrites } from './user-writes.ts';
import { bulkHandler } from './bulk.ts';
import { listOf, serviceProviderConfig, userResourceType, userSchema } from './discovery.ts';

export interface ScimApiDeps {
  db: Database;
  log: Logger;
  settings: OrgSettings;
  verifiers: TokenVerifier[];
  announce: Announce;
  engine: EngineHolder;
  throttle: AuthThrottle;
  /** The issuer: SCIM URLs in answers are built on it, never on the request's Host. */
  issuer: string;
}

export const SCIM_PREFIX = '/scim/v2';
const ORG_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The caller manages the users of the org in the path (ORG_OWNER or
 * ORG_USER_MANAGER there, or IAM_OWNER): a token of another org is 403;
 * an org that does not exist is 404 to whoever could manage it (IAM_OWNER).
 */
function orgAccess(db: Database): Middleware {
  return async (ctx, next) => {
    const orgId = ctx.params.orgId!;
    const principal = ctx.state.principal as Principal;
    assertMayManageUsers(principal, orgId);
    if (!ORG_ID.test(orgId) || !(await findOrg(db, orgId))) throw new NotFound('organization not found');
    await next();
  };
}

function json(ctx: Context, body: object): void {
  ctx.type = SCIM_CONTENT_TYPE;
  ctx.body = body;
}

/**
 * SCIM 2.0 (RFC 7644) per org at /scim/v2/{orgId} (docs/scim.md): errors
 * in the SCIM error schema, bearer authentication as in the management
 * API (under the same throttle), the org check, JSON bodies, then the
 * resources.
 */
export function scimRouter({ db, log, settings, verifiers, announce, engine, throttle, issuer }: ScimApiDeps): Router {
  const baseOf = (ctx: Context) => `${issuer.replace(/\/$/, '')}${SCIM_PREFIX}/${ctx.params.orgId}`;
  const router = new Router({ prefix: `${SCIM_PREFIX}/:orgId` });
  router.use(scimErrors(log), throttledAuthentication(authenticate(db, verifiers, dpopProofCheck(engine)), throttle), orgAccess(db), ...scimBody());

  router.get('/ServiceProviderConfig', (ctx) => json(ctx, serviceProviderConfig(baseOf(ctx))));
  router.get('/ResourceTypes', (ctx) => json(ctx, listOf([userResourceType(baseOf(ctx))])));
  router.get('/ResourceTypes/User', (ctx) => json(ctx, userResourceType(baseOf(ctx))));
  router.get('/Schemas', (ctx) => json(ctx, listOf([userSchema(baseOf(ctx))])));
  router.get('/Schemas/:schemaId', (ctx) => {
    if (!isUserSchema(ctx.params.schemaId!)) throw new NotFound('no such schema');
    json(ctx, userSchema(baseOf(ctx)));
  });
  const writes = userWrites(db, announce, settings);
  const users = scimUserRoutes(db, writes, baseOf);
  router.use(users.routes(), users.allowedMethods({ throw: false }));
  // Groups are not offered (docs/decisions.md): a 404 that says so. Not
  // RFC 7644's 501, which clients such as Entra ID retry as a server fault.
  router.all(['/Groups', '/Groups/{*rest}'], () => {
    throw new NotFound('Groups are not offered by this service: grant roles in the console or the management API');
  });
  router.post('/Bulk', bulkHandler(writes, log, baseOf));
  // Every other path under the org is answered here (so errors keep the
  // SCIM shape): 405 where another method is served, else 404.
  router.all('/{*rest}', (ctx) => {
    const served = ctx.matched?.filter((layer) => layer.methods.length > 0 && !String(layer.path).endsWith('{*rest}')).flatMap((layer) => layer.methods) ?? [];
    if (served.length) {
      ctx.status = 405;
      ctx.set('Allow', [...new Set(served)].join(', '));
    }
  });
  return router;
}

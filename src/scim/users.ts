import Router from '@koa/router';
import type { Context } from 'koa';
import type { Database } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import type { Principal } from '../domain/roles.ts';
import { NotFound } from '../domain/errors.ts';
import { ScimInvalid } from '../domain/scim/errors.ts';
import {
  LIST_RESPONSE_SCHEMA,
  canonicalResource,
  resourceOfUser,
  userOfResource,
  userResponse,
  type ScimUser,
  type StoredScimUser,
  type ValidUserResource,
} from '../domain/scim/user.ts';
import { applyPatch, patchOperations } from '../domain/scim/patch.ts';
import { getScimUser, searchScimUsers } from '../queries/scim-users.ts';
import { changeScimUser, createScimUser } from '../commands/scim-users.ts';
import { removeUser } from '../commands/remove-user.ts';
import type { OrgSettings } from '../commands/setup-org.ts';
import { validator } from '../admin/validate.ts';
import { userResourceSchema } from './user-schema.ts';
import { listQueryOf } from './list-query.ts';
import { SCIM_CONTENT_TYPE } from './errors.ts';

const checkResource = validator<ValidUserResource>(userResourceSchema);

/** A body (or a patched resource) as the user to store: canonical names, then the schema's limits. */
function resourceOf(body: unknown): ValidUserResource {
  return checkResource(canonicalResource(body));
}

/** Passwords are set when a user is created (docs/scim.md); changing one is the user's own business or an admin's reset. */
function withoutPassword(resource: ValidUserResource): ScimUser {
  if (resource.password !== undefined) throw new ScimInvalid('invalidValue', 'password is accepted when a user is created (POST) only');
  return userOfResource(resource);
}

const principal = (ctx: Context) => ctx.state.principal as Principal;
const orgIdOf = (ctx: Context) => ctx.params.orgId!;

/**
 * The Users endpoint of RFC 7644 3 for one org: list with filter, sort and
 * page; create; read; replace (PUT); PATCH; delete. `base` is the org's
 * SCIM base URL, for `meta.location` and the Location header.
 */
export function scimUserRoutes(db: Database, announce: Announce, settings: OrgSettings, baseOf: (ctx: Context) => string): Router {
  const router = new Router();
  // An id of another shape (a NUL, a lone surrogate) names nobody and never reaches SQL.
  router.param('userId', (value, _ctx, next) => {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(value)) throw new NotFound(`no User ${value.slice(0, 64)}`);
    return next();
  });
  const answer = (ctx: Context, user: StoredScimUser, status = 200) => {
    const location = `${baseOf(ctx)}/Users/${user.id}`;
    ctx.status = status;
    ctx.type = SCIM_CONTENT_TYPE;
    ctx.body = userResponse(user, location);
    if (status === 201) ctx.set('Location', location);
  };

  router.get('/Users', async (ctx) => {
    const query = listQueryOf(ctx.query);
    const { total, users } = await searchScimUsers(db, principal(ctx), orgIdOf(ctx), query);
    ctx.type = SCIM_CONTENT_TYPE;
    ctx.body = {
      schemas: [LIST_RESPONSE_SCHEMA],
      totalResults: total,
      startIndex: query.startIndex,
      itemsPerPage: users.length,
      Resources: users.map((user) => userResponse(user, `${baseOf(ctx)}/Users/${user.id}`)),
    };
  });

  router.post('/Users', async (ctx) => {
    const resource = resourceOf(ctx.request.body);
    const user = userOfResource(resource);
    answer(ctx, await createScimUser(db, announce, settings, principal(ctx), orgIdOf(ctx), user, resource.password), 201);
  });

  router.get('/Users/:userId', async (ctx) => {
    answer(ctx, await getScimUser(db, principal(ctx), orgIdOf(ctx), ctx.params.userId!));
  });

  router.put('/Users/:userId', async (ctx) => {
    const user = withoutPassword(resourceOf(ctx.request.body));
    answer(ctx, await changeScimUser(db, announce, principal(ctx), orgIdOf(ctx), ctx.params.userId!, () => user));
  });

  router.patch('/Users/:userId', async (ctx) => {
    const operations = patchOperations(ctx.request.body);
    const patched = (current: StoredScimUser) => withoutPassword(resourceOf(applyPatch(resourceOfUser(current), operations)));
    answer(ctx, await changeScimUser(db, announce, principal(ctx), orgIdOf(ctx), ctx.params.userId!, patched));
  });

  router.delete('/Users/:userId', async (ctx) => {
    // Only human users are SCIM Users: a machine user of the org is not found here.
    const user = await getScimUser(db, principal(ctx), orgIdOf(ctx), ctx.params.userId!);
    await removeUser(db, announce, principal(ctx), orgIdOf(ctx), user.id);
    ctx.status = 204;
  });

  return router;
}

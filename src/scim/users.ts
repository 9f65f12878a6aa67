import Router from '@koa/router';
import type { Context } from 'koa';
import type { Database } from '../storage/database.ts';
import type { ScimListQuery } from '../storage/scim-users.ts';
import type { Principal } from '../domain/roles.ts';
import { NotFound } from '../domain/errors.ts';
import { etagOf, tagCondition } from '../domain/scim/etag.ts';
import { project, type Projection } from '../domain/scim/projection.ts';
import { LIST_RESPONSE_SCHEMA, userResponse, type StoredScimUser } from '../domain/scim/user.ts';
import { getScimUser, searchScimUsers } from '../queries/scim-users.ts';
import { listQueryOf, projectionOfQuery } from './list-query.ts';
import { searchOf } from './search.ts';
import { SCIM_CONTENT_TYPE } from './errors.ts';
import { preconditionOf, type UserWrites } from './user-writes.ts';

const principal = (ctx: Context) => ctx.state.principal as Principal;
const orgIdOf = (ctx: Context) => ctx.params.orgId!;

/**
 * The Users endpoint of RFC 7644 3 for one org: list with filter, sort and
 * page (GET, or POST .search); create; read; replace (PUT); PATCH; delete;
 * each answer in the projection its query asks for, each single answer
 * with its ETag; If-Match and If-None-Match honoured. `baseOf` gives the
 * org's SCIM base URL, for `meta.location` and the Location header.
 */
export function scimUserRoutes(db: Database, writes: UserWrites, baseOf: (ctx: Context) => string): Router {
  const router = new Router();
  // An id of another shape (a NUL, a lone surrogate) names nobody and never reaches SQL.
  router.param('userId', (value, _ctx, next) => {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(value)) throw new NotFound(`no User ${value.slice(0, 64)}`);
    return next();
  });
  // Each handler reads the projection (and If-Match) before it writes, so a malformed one changes nothing.
  const answer = (ctx: Context, user: StoredScimUser, projection: Projection | undefined, status = 200) => {
    const location = `${baseOf(ctx)}/Users/${user.id}`;
    ctx.status = status;
    ctx.type = SCIM_CONTENT_TYPE;
    ctx.set('ETag', etagOf(user.version));
    ctx.body = project(userResponse(user, location), projection);
    if (status === 201) ctx.set('Location', location);
  };
  const list = async (ctx: Context, query: ScimListQuery & { startIndex: number }, projection: Projection | undefined) => {
    const { total, users } = await searchScimUsers(db, principal(ctx), orgIdOf(ctx), query);
    ctx.type = SCIM_CONTENT_TYPE;
    ctx.body = {
      schemas: [LIST_RESPONSE_SCHEMA],
      totalResults: total,
      startIndex: query.startIndex,
      itemsPerPage: users.length,
      Resources: users.map((user) => project(userResponse(user, `${baseOf(ctx)}/Users/${user.id}`), projection)),
    };
  };

  router.get('/Users', async (ctx) => {
    await list(ctx, listQueryOf(ctx.query), projectionOfQuery(ctx.query));
  });

  // A search from the root (RFC 7644 3.4.3) spans every resource type: Users are the only one.
  router.post(['/Users/.search', '/.search'], async (ctx) => {
    const { query, projection } = searchOf(ctx.request.body);
    await list(ctx, query, projection);
  });

  router.post('/Users', async (ctx) => {
    const projection = projectionOfQuery(ctx.query);
    answer(ctx, await writes.create(principal(ctx), orgIdOf(ctx), ctx.request.body), projection, 201);
  });

  router.get('/Users/:userId', async (ctx) => {
    const header = ctx.get('If-None-Match');
    const unchanged = header ? tagCondition(header, 'If-None-Match') : undefined;
    const projection = projectionOfQuery(ctx.query);
    const user = await getScimUser(db, principal(ctx), orgIdOf(ctx), ctx.params.userId!);
    if (unchanged?.(user.version)) {
      ctx.status = 304;
      ctx.set('ETag', etagOf(user.version));
      return;
    }
    answer(ctx, user, projection);
  });

  router.put('/Users/:userId', async (ctx) => {
    const precondition = preconditionOf(ctx.get('If-Match'));
    const projection = projectionOfQuery(ctx.query);
    answer(ctx, await writes.replace(principal(ctx), orgIdOf(ctx), ctx.params.userId!, ctx.request.body, precondition), projection);
  });

  router.patch('/Users/:userId', async (ctx) => {
    const precondition = preconditionOf(ctx.get('If-Match'));
    const projection = projectionOfQuery(ctx.query);
    answer(ctx, await writes.patch(principal(ctx), orgIdOf(ctx), ctx.params.userId!, ctx.request.body, precondition), projection);
  });

  router.delete('/Users/:userId', async (ctx) => {
    await writes.remove(principal(ctx), orgIdOf(ctx), ctx.params.userId!, preconditionOf(ctx.get('If-Match')));
    ctx.status = 204;
  });

  return router;
}

import Router from '@koa/router';
import type { Context } from 'koa';
import type { Database } from '../storage/database.ts';
import type { Principal } from '../domain/roles.ts';
import {
  searchApps,
  searchEvents,
  searchOrgs,
  searchProjects,
  searchUsers,
  type EventQuery,
  type NameQuery,
  type OrgQuery,
  type SearchRequest,
  type UserQuery,
} from '../queries/search.ts';
import { actingOrgId } from './org-context.ts';
import { validator } from './validate.ts';
import { dateRangeRule, eventSearchSchema, limitRule, nameSearchSchema, orgSearchSchema, userSearchSchema } from './search-schemas.ts';

const parseUsers = validator<SearchRequest<UserQuery>>(userSearchSchema, limitRule);
const parseNames = validator<SearchRequest<NameQuery>>(nameSearchSchema, limitRule);
const parseOrgs = validator<SearchRequest<OrgQuery>>(orgSearchSchema, limitRule);
const parseEvents = validator<SearchRequest<EventQuery>>(eventSearchSchema, (request) => [...limitRule(request), ...dateRangeRule(request)]);

const principal = (ctx: Context) => ctx.state.principal as Principal;
/** No body is the first page of everything. */
const body = (ctx: Context) => ctx.request.body ?? {};

/** The search calls of the console (docs/api/search.md): one page of a list and its total. */
export function searchRoutes(db: Database): Router {
  const router = new Router();
  router.post('/management/v1/users/_search', async (ctx) => {
    const request = parseUsers(body(ctx));
    ctx.body = await searchUsers(db, principal(ctx), await actingOrgId(ctx, db), request);
  });
  router.post('/management/v1/projects/_search', async (ctx) => {
    const request = parseNames(body(ctx));
    ctx.body = await searchProjects(db, principal(ctx), await actingOrgId(ctx, db), request);
  });
  router.post('/management/v1/projects/:projectId/apps/_search', async (ctx) => {
    const request = parseNames(body(ctx));
    ctx.body = await searchApps(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.projectId!, request);
  });
  router.post('/admin/v1/orgs/_search', async (ctx) => {
    ctx.body = await searchOrgs(db, principal(ctx), parseOrgs(body(ctx)));
  });
  router.post('/admin/v1/events/_search', async (ctx) => {
    ctx.body = await searchEvents(db, principal(ctx), parseEvents(body(ctx)));
  });
  return router;
}

import Router from '@koa/router';
import type { Context } from 'koa';
import type { Database } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import type { Principal } from '../domain/roles.ts';
import { addRole, changeProject, changeRole, createProject, deleteProject, removeRole } from '../commands/projects.ts';
import { getProject, searchRoles, type RoleQuery } from '../queries/projects.ts';
import type { SearchRequest } from '../queries/search.ts';
import { actingOrgId } from './org-context.ts';
import { validator } from './validate.ts';
import { projectRoleChangeSchema, projectRoleSchema, projectSchema } from './app-schemas.ts';
import { limitRule, roleSearchSchema } from './search-schemas.ts';

const parseProject = validator<{ name: string }>(projectSchema);
const parseRole = validator<{ roleKey: string; displayName?: string }>(projectRoleSchema);
const parseRoleChange = validator<{ displayName: string }>(projectRoleChangeSchema);
const parseRoleSearch = validator<SearchRequest<RoleQuery>>(roleSearchSchema, limitRule);

const principal = (ctx: Context) => ctx.state.principal as Principal;

/** Projects and their roles (docs/api/projects-apps.md). */
export function projectRoutes(db: Database, announce: Announce): Router {
  const router = new Router({ prefix: '/management/v1/projects' });
  router.post('/', async (ctx) => {
    const input = parseProject(ctx.request.body);
    ctx.body = await createProject(db, principal(ctx), await actingOrgId(ctx, db), input);
  });
  router.get('/:projectId', async (ctx) => {
    ctx.body = { project: await getProject(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.projectId!) };
  });
  router.put('/:projectId', async (ctx) => {
    const input = parseProject(ctx.request.body);
    ctx.body = await changeProject(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.projectId!, input);
  });
  router.delete('/:projectId', async (ctx) => {
    ctx.body = await deleteProject({ db, announce }, principal(ctx), await actingOrgId(ctx, db), ctx.params.projectId!);
  });
  router.post('/:projectId/roles', async (ctx) => {
    const input = parseRole(ctx.request.body);
    ctx.body = await addRole(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.projectId!, input);
  });
  router.post('/:projectId/roles/_search', async (ctx) => {
    const request = parseRoleSearch(ctx.request.body ?? {});
    ctx.body = await searchRoles(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.projectId!, request);
  });
  router.put('/:projectId/roles/:roleKey', async (ctx) => {
    const input = parseRoleChange(ctx.request.body);
    ctx.body = await changeRole(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.projectId!, ctx.params.roleKey!, input);
  });
  router.delete('/:projectId/roles/:roleKey', async (ctx) => {
    ctx.body = await removeRole(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.projectId!, ctx.params.roleKey!);
  });
  return router;
}

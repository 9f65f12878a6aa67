import Router from '@koa/router';
import type { Database } from '../storage/database.ts';
import type { Principal } from '../domain/roles.ts';
import { readDetails } from '../storage/event-log.ts';
import { projectRoles } from '../storage/projects.ts';
import { addRole, createProject, projectOfOrg, requireOrgOwner } from '../commands/projects.ts';
import { actingOrgId } from './org-context.ts';
import { validator } from './validate.ts';
import { projectRoleSchema, projectSchema } from './app-schemas.ts';

const parseProject = validator<{ name: string }>(projectSchema);
const parseRole = validator<{ roleKey: string; displayName?: string }>(projectRoleSchema);

/** Projects and their roles (SPEC 3.2). */
export function projectRoutes(db: Database): Router {
  const router = new Router({ prefix: '/management/v1/projects' });
  router.post('/', async (ctx) => {
    const input = parseProject(ctx.request.body);
    ctx.body = await createProject(db, ctx.state.principal as Principal, await actingOrgId(ctx, db), input);
  });
  router.get('/:projectId', async (ctx) => {
    const orgId = await actingOrgId(ctx, db);
    requireOrgOwner(ctx.state.principal as Principal, orgId);
    const project = await projectOfOrg(db, orgId, ctx.params.projectId!);
    const roles = await projectRoles(db, project.id);
    ctx.body = {
      project: { id: project.id, name: project.name, details: readDetails(project, project.org_id), roles: roles.map((r) => ({ roleKey: r.role_key, displayName: r.display_name })) },
    };
  });
  router.post('/:projectId/roles', async (ctx) => {
    const input = parseRole(ctx.request.body);
    ctx.body = await addRole(db, ctx.state.principal as Principal, await actingOrgId(ctx, db), ctx.params.projectId!, input);
  });
  return router;
}

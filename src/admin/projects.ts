import Router from '@koa/router';
import type { Database } from '../storage/database.ts';
import type { Principal } from '../domain/roles.ts';
import { addRole, createProject } from '../commands/projects.ts';
import { getProject } from '../queries/projects.ts';
import { actingOrgId } from './org-context.ts';
import { validator } from './validate.ts';
import { projectRoleSchema, projectSchema } from './app-schemas.ts';

const parseProject = validator<{ name: string }>(projectSchema);
const parseRole = validator<{ roleKey: string; displayName?: string }>(projectRoleSchema);

/** Projects and their roles (docs/api/projects-apps.md). */
export function projectRoutes(db: Database): Router {
  const router = new Router({ prefix: '/management/v1/projects' });
  router.post('/', async (ctx) => {
    const input = parseProject(ctx.request.body);
    ctx.body = await createProject(db, ctx.state.principal as Principal, await actingOrgId(ctx, db), input);
  });
  router.get('/:projectId', async (ctx) => {
    ctx.body = { project: await getProject(db, ctx.state.principal as Principal, await actingOrgId(ctx, db), ctx.params.projectId!) };
  });
  router.post('/:projectId/roles', async (ctx) => {
    const input = parseRole(ctx.request.body);
    ctx.body = await addRole(db, ctx.state.principal as Principal, await actingOrgId(ctx, db), ctx.params.projectId!, input);
  });
  return router;
}

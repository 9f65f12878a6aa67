import Router from '@koa/router';
import type { Database } from '../storage/database.ts';
import type { Principal } from '../domain/roles.ts';
import { setupOrg, type OrgSettings, type SetupOrgInput } from '../commands/setup-org.ts';
import { validator } from './validate.ts';
import { setupOrgSchema } from './schemas.ts';

const parseSetupOrg = validator<SetupOrgInput>(setupOrgSchema);

/** `POST /admin/v1/orgs/_setup` (SPEC 3.1). */
export function orgRoutes(db: Database, settings: OrgSettings): Router {
  const router = new Router();
  router.post('/admin/v1/orgs/_setup', async (ctx) => {
    const input = parseSetupOrg(ctx.request.body);
    ctx.body = await setupOrg(db, settings, ctx.state.principal as Principal, input);
  });
  return router;
}

import Router from '@koa/router';
import type { Database } from '../storage/database.ts';
import type { Principal } from '../domain/roles.ts';
import { setupOrg, type OrgSettings, type SetupOrgInput } from '../commands/setup-org.ts';
import { changeOrg, createOrg } from '../commands/orgs.ts';
import { deactivateOrg, reactivateOrg } from '../commands/org-state.ts';
import type { Announce } from '../storage/invalidation.ts';
import { actingOrgId } from './org-context.ts';
import { validator } from './validate.ts';
import { parseWithPasswordRule } from './password-rule.ts';
import { instancePasswordPolicy } from '../queries/password-policy.ts';
import { orgNameSchema, setupOrgSchema } from './schemas.ts';
import { emptySchema } from './user-schemas.ts';

const parseOrgName = validator<{ name: string }>(orgNameSchema);
const parseEmpty = validator<Record<string, never>>(emptySchema);

/** `POST /admin/v1/orgs/_setup`, an org's creation and rename (docs/api/orgs.md). */
export function orgRoutes(db: Database, settings: OrgSettings, announce: Announce): Router {
  const parseSetupOrg = validator<SetupOrgInput>(setupOrgSchema);
  const router = new Router();
  router.post('/admin/v1/orgs/_setup', async (ctx) => {
    const body = ctx.request.body as { human?: { password?: unknown } } | undefined;
    // The new org follows the instance default.
    const policy = await instancePasswordPolicy(db, settings.passwordComplexity);
    const input = parseWithPasswordRule(parseSetupOrg, body, { policy, field: 'human.password', value: body?.human?.password });
    ctx.body = await setupOrg(db, settings, ctx.state.principal as Principal, input);
  });
  router.post('/management/v1/orgs', async (ctx) => {
    const input = parseOrgName(ctx.request.body);
    ctx.body = await createOrg(db, settings.instanceDomain, ctx.state.principal as Principal, input);
  });
  router.put('/management/v1/orgs/me', async (ctx) => {
    const input = parseOrgName(ctx.request.body);
    ctx.body = await changeOrg({ db, announce }, ctx.state.principal as Principal, await actingOrgId(ctx, db), input);
  });
  for (const [path, change] of [
    ['_deactivate', deactivateOrg],
    ['_reactivate', reactivateOrg],
  ] as const) {
    router.post(`/management/v1/orgs/me/${path}`, async (ctx) => {
      parseEmpty(ctx.request.body ?? {});
      ctx.body = await change(db, announce, ctx.state.principal as Principal, await actingOrgId(ctx, db));
    });
  }
  return router;
}

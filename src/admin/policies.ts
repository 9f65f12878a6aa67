import Router from '@koa/router';
import type { Context } from 'koa';
import type { Database } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import type { Principal } from '../domain/roles.ts';
import type { PolicyKind } from '../domain/policies/kind.ts';
import { getInstancePolicy, getOrgPolicy } from '../queries/policies.ts';
import { resetOrgPolicy, setInstancePolicy, setOrgPolicy } from '../commands/policies.ts';
import { actingOrgId } from './org-context.ts';
import { validator } from './validate.ts';

const principal = (ctx: Context) => ctx.state.principal as Principal;

/**
 * Every policy kind the same way (docs/api/policies.md): the instance
 * default at `/admin/v1/policies/{kind}`, the acting org's override at
 * `/management/v1/policies/{kind}`.
 */
export function policyRoutes(db: Database, announce: Announce, kinds: Array<PolicyKind<object>>): Router {
  const router = new Router();
  for (const kind of kinds) {
    const parse = validator<Partial<object>>(kind.schema);
    router.get(`/admin/v1/policies/${kind.name}`, async (ctx) => {
      ctx.body = await getInstancePolicy(db, principal(ctx), kind);
    });
    router.put(`/admin/v1/policies/${kind.name}`, async (ctx) => {
      const input = parse(ctx.request.body ?? {});
      ctx.body = await setInstancePolicy(db, announce, principal(ctx), kind, input);
    });
    router.get(`/management/v1/policies/${kind.name}`, async (ctx) => {
      ctx.body = await getOrgPolicy(db, principal(ctx), await actingOrgId(ctx, db), kind);
    });
    router.put(`/management/v1/policies/${kind.name}`, async (ctx) => {
      const input = parse(ctx.request.body ?? {});
      ctx.body = await setOrgPolicy(db, announce, principal(ctx), await actingOrgId(ctx, db), kind, input);
    });
    router.delete(`/management/v1/policies/${kind.name}`, async (ctx) => {
      ctx.body = await resetOrgPolicy(db, announce, principal(ctx), await actingOrgId(ctx, db), kind);
    });
  }
  return router;
}

import Router from '@koa/router';
import type { Context } from 'koa';
import { IDP_KINDS } from '../domain/idps.ts';
import type { Principal } from '../domain/roles.ts';
import { changeIdp, createIdp, removeIdp, type IdpCommandDeps, type IdpInput } from '../commands/idps.ts';
import { addLoginPolicyIdp, removeLoginPolicyIdp } from '../commands/login-policy-idps.ts';
import type { IdpScope } from '../queries/idp-scope.ts';
import { getIdp, searchIdpViews } from '../queries/idps.ts';
import { searchPolicyIdps } from '../queries/login-policy-idps.ts';
import type { NameQuery, SearchRequest } from '../queries/search.ts';
import type { Announce } from '../storage/invalidation.ts';
import { actingOrgId } from './org-context.ts';
import { idpRule, idpSchema, policyIdpSchema } from './idp-schemas.ts';
import { limitRule, nameSearchSchema } from './search-schemas.ts';
import { validator } from './validate.ts';

const principal = (ctx: Context) => ctx.state.principal as Principal;
const parseSearch = validator<SearchRequest<NameQuery>>(nameSearchSchema, limitRule);
const parsePolicyIdp = validator<{ idpId: string }>(policyIdpSchema);

const PARSERS = new Map(
  [...IDP_KINDS.values()].map((kind) => [
    kind.name,
    { kind, create: validator<IdpInput>(idpSchema(kind, false), idpRule(kind)), change: validator<IdpInput>(idpSchema(kind, true), idpRule(kind)) },
  ]),
);

/**
 * External identity providers (docs/api/idps.md): the instance's at
 * `/admin/v1/idps` (IAM_OWNER), an org's at `/management/v1/idps`
 * (ORG_OWNER), and the login policy's list of them at `…/policies/login/idps`.
 */
export function idpRoutes(deps: IdpCommandDeps, announce: Announce): Router {
  const { db } = deps;
  const router = new Router();
  const scopes: Array<[string, (ctx: Context) => Promise<IdpScope>]> = [
    ['/admin/v1', async () => ({ orgId: null })],
    ['/management/v1', async (ctx) => ({ orgId: await actingOrgId(ctx, db) })],
  ];
  for (const [prefix, scopeOf] of scopes) {
    router.post(`${prefix}/idps/_search`, async (ctx) => {
      const request = parseSearch(ctx.request.body ?? {});
      ctx.body = await searchIdpViews(db, principal(ctx), await scopeOf(ctx), request);
    });
    for (const [name, parse] of PARSERS) {
      router.post(`${prefix}/idps/${name}`, async (ctx) => {
        const input = parse.create(ctx.request.body ?? {});
        ctx.body = await createIdp(deps, principal(ctx), await scopeOf(ctx), parse.kind, input);
      });
      router.put(`${prefix}/idps/${name}/:idpId`, async (ctx) => {
        const input = parse.change(ctx.request.body ?? {});
        ctx.body = await changeIdp(deps, principal(ctx), await scopeOf(ctx), parse.kind, ctx.params.idpId!, input);
      });
    }
    router.get(`${prefix}/idps/:idpId`, async (ctx) => {
      ctx.body = await getIdp(db, principal(ctx), await scopeOf(ctx), ctx.params.idpId!);
    });
    router.delete(`${prefix}/idps/:idpId`, async (ctx) => {
      ctx.body = await removeIdp(deps, principal(ctx), await scopeOf(ctx), ctx.params.idpId!);
    });

    router.post(`${prefix}/policies/login/idps/_search`, async (ctx) => {
      ctx.body = await searchPolicyIdps(db, principal(ctx), await scopeOf(ctx));
    });
    router.post(`${prefix}/policies/login/idps`, async (ctx) => {
      const { idpId } = parsePolicyIdp(ctx.request.body ?? {});
      ctx.body = await addLoginPolicyIdp(db, announce, principal(ctx), await scopeOf(ctx), idpId);
    });
    router.delete(`${prefix}/policies/login/idps/:idpId`, async (ctx) => {
      ctx.body = await removeLoginPolicyIdp(db, announce, principal(ctx), await scopeOf(ctx), ctx.params.idpId!);
    });
  }
  return router;
}

import Router from '@koa/router';
import type { Context } from 'koa';
import type { Database } from '../storage/database.ts';
import type { Principal } from '../domain/roles.ts';
import {
  addInstanceMember,
  addOrgMember,
  changeInstanceMember,
  changeOrgMember,
  removeInstanceMember,
  removeOrgMember,
  type MemberInput,
} from '../commands/members.ts';
import { searchInstanceMembers, searchOrgMembers, type MemberQuery } from '../queries/members.ts';
import type { SearchRequest } from '../queries/search.ts';
import { actingOrgId } from './org-context.ts';
import { validator } from './validate.ts';
import { instanceMemberRolesSchema, instanceMemberSchema, orgMemberRolesSchema, orgMemberSchema } from './user-schemas.ts';
import { limitRule, memberSearchSchema } from './search-schemas.ts';

const parseOrgMember = validator<MemberInput>(orgMemberSchema);
const parseInstanceMember = validator<MemberInput>(instanceMemberSchema);
const parseOrgRoles = validator<{ roles: string[] }>(orgMemberRolesSchema);
const parseInstanceRoles = validator<{ roles: string[] }>(instanceMemberRolesSchema);
const parseSearch = validator<SearchRequest<MemberQuery>>(memberSearchSchema, limitRule);

const principal = (ctx: Context) => ctx.state.principal as Principal;

/** Role memberships (docs/api/users.md, Members): in the acting org, and on the instance. */
export function memberRoutes(db: Database): Router {
  const router = new Router();
  router.post('/management/v1/orgs/me/members', async (ctx) => {
    const input = parseOrgMember(ctx.request.body);
    ctx.body = await addOrgMember(db, principal(ctx), await actingOrgId(ctx, db), input);
  });
  router.post('/management/v1/orgs/me/members/_search', async (ctx) => {
    const request = parseSearch(ctx.request.body ?? {});
    ctx.body = await searchOrgMembers(db, principal(ctx), await actingOrgId(ctx, db), request);
  });
  router.put('/management/v1/orgs/me/members/:userId', async (ctx) => {
    const input = parseOrgRoles(ctx.request.body);
    ctx.body = await changeOrgMember(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, input);
  });
  router.delete('/management/v1/orgs/me/members/:userId', async (ctx) => {
    ctx.body = await removeOrgMember(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });
  router.post('/admin/v1/members', async (ctx) => {
    const input = parseInstanceMember(ctx.request.body);
    ctx.body = await addInstanceMember(db, principal(ctx), input);
  });
  router.post('/admin/v1/members/_search', async (ctx) => {
    ctx.body = await searchInstanceMembers(db, principal(ctx), parseSearch(ctx.request.body ?? {}));
  });
  router.put('/admin/v1/members/:userId', async (ctx) => {
    const input = parseInstanceRoles(ctx.request.body);
    ctx.body = await changeInstanceMember(db, principal(ctx), ctx.params.userId!, input);
  });
  router.delete('/admin/v1/members/:userId', async (ctx) => {
    ctx.body = await removeInstanceMember(db, principal(ctx), ctx.params.userId!);
  });
  return router;
}

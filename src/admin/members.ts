import Router from '@koa/router';
import type { Database } from '../storage/database.ts';
import type { Principal } from '../domain/roles.ts';
import { addInstanceMember, addOrgMember, type MemberInput } from '../commands/members.ts';
import { actingOrgId } from './org-context.ts';
import { validator } from './validate.ts';
import { instanceMemberSchema, orgMemberSchema } from './user-schemas.ts';

const parseOrgMember = validator<MemberInput>(orgMemberSchema);
const parseInstanceMember = validator<MemberInput>(instanceMemberSchema);

/** Role memberships (docs/api/users.md, Members): in the acting org, and on the instance. */
export function memberRoutes(db: Database): Router {
  const router = new Router();
  router.post('/management/v1/orgs/me/members', async (ctx) => {
    const input = parseOrgMember(ctx.request.body);
    ctx.body = await addOrgMember(db, ctx.state.principal as Principal, await actingOrgId(ctx, db), input);
  });
  router.post('/admin/v1/members', async (ctx) => {
    const input = parseInstanceMember(ctx.request.body);
    ctx.body = await addInstanceMember(db, ctx.state.principal as Principal, input);
  });
  return router;
}

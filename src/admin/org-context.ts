import type { Context } from 'koa';
import type { Queryable } from '../storage/database.ts';
import { findOrg } from '../storage/orgs.ts';
import { NotFound } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';

/** The org a management call acts on (docs/api/README.md): `x-service-orgid`, else the caller's own. */
export async function actingOrgId(ctx: Context, db: Queryable): Promise<string> {
  const principal = ctx.state.principal as Principal;
  const requested = ctx.get('x-service-orgid').trim();
  if (!requested || requested === principal.orgId) return principal.orgId;
  if (requested.length > 64 || !(await findOrg(db, requested))) throw new NotFound('organization not found');
  return requested;
}

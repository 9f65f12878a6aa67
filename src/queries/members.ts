import type { Queryable } from '../storage/database.ts';
import { findInstance } from '../storage/instance.ts';
import { searchMemberRows, type MemberRow } from '../storage/member-search.ts';
import { NotFound, PermissionDenied } from '../domain/errors.ts';
import { hasInstanceRole, mayActInOrg, type Principal } from '../domain/roles.ts';
import { loginName } from '../domain/users.ts';
import { pageOf, textMatch, type PageRequest, type SearchResult, type TextMethod } from '../domain/search.ts';

// The member lists (docs/api/users.md, Members): who holds which roles in
// the acting org, or on the instance, with the names the console shows.

export interface MemberQuery {
  userNameQuery?: { userName: string; method?: TextMethod };
  displayNameQuery?: { displayName: string; method?: TextMethod };
}

export interface MemberView {
  userId: string;
  roles: string[];
  displayName: string;
  preferredLoginName: string;
  userType: 'TYPE_HUMAN' | 'TYPE_MACHINE';
}

type Request = { query?: PageRequest; queries?: MemberQuery[] };

async function search(db: Queryable, scope: { scope: 'instance' | 'org'; scopeId: string }, request: Request): Promise<SearchResult<MemberView>> {
  const filters = (request.queries ?? []).map((q) => ({
    ...(q.userNameQuery && { userName: textMatch(q.userNameQuery.userName, q.userNameQuery.method) }),
    ...(q.displayNameQuery && { displayName: textMatch(q.displayNameQuery.displayName, q.displayNameQuery.method) }),
  }));
  const { total, rows } = await searchMemberRows(db, scope, filters, pageOf(request.query));
  return { details: { totalResult: String(total), viewTimestamp: new Date().toISOString() }, result: rows.map(toView) };
}

function toView(row: MemberRow): MemberView {
  return {
    userId: row.user_id,
    roles: row.roles,
    displayName: row.display_name,
    preferredLoginName: loginName(row.user_name, row.primary_domain),
    userType: row.type === 'machine' ? 'TYPE_MACHINE' : 'TYPE_HUMAN',
  };
}

export async function searchOrgMembers(db: Queryable, actor: Principal, orgId: string, request: Request): Promise<SearchResult<MemberView>> {
  if (!mayActInOrg(actor, orgId, 'ORG_OWNER')) throw new PermissionDenied('listing members of this organization requires ORG_OWNER');
  return search(db, { scope: 'org', scopeId: orgId }, request);
}

export async function searchInstanceMembers(db: Queryable, actor: Principal, request: Request): Promise<SearchResult<MemberView>> {
  if (!hasInstanceRole(actor, 'IAM_OWNER')) throw new PermissionDenied('listing instance members requires IAM_OWNER');
  const instance = await findInstance(db);
  if (!instance) throw new NotFound('the instance is not set up');
  return search(db, { scope: 'instance', scopeId: instance.id }, request);
}

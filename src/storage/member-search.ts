import type { Queryable } from './database.ts';
import { Conditions, pagedRows } from './search.ts';
import type { Page, TextMatch } from '../domain/search.ts';

export interface MemberRow {
  user_id: string;
  roles: string[];
  type: 'human' | 'machine';
  user_name: string;
  display_name: string;
  primary_domain: string;
}

export interface MemberFilters {
  userName?: TextMatch;
  displayName?: TextMatch;
}

/** Members of one scope (the instance or an org) with their users, by user name. */
export function searchMemberRows(
  db: Queryable,
  scope: { scope: 'instance' | 'org'; scopeId: string },
  filters: MemberFilters[],
  page: Page,
): Promise<{ total: number; rows: MemberRow[] }> {
  const conditions = new Conditions();
  conditions.add(`m.scope = ${conditions.param(scope.scope)}`).add(`m.scope_id = ${conditions.param(scope.scopeId)}`);
  for (const filter of filters) {
    if (filter.userName) conditions.text('u.user_name', filter.userName);
    if (filter.displayName) conditions.text("COALESCE(u.display_name, u.name, '')", filter.displayName);
  }
  return pagedRows<MemberRow>(db, {
    columns: `m.user_id, m.roles, u.type, u.user_name, COALESCE(u.display_name, u.name, '') AS display_name, d.domain AS primary_domain`,
    table: 'memberships m JOIN users u ON u.id = m.user_id',
    joins: 'JOIN org_domains d ON d.org_id = u.org_id AND d.is_primary',
    conditions,
    orderBy: ['(lower(u.user_name) COLLATE "C")', 'm.user_id'],
    page,
  });
}

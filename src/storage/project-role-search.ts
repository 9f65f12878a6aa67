import type { Queryable } from './database.ts';
import { Conditions, pagedRows } from './search.ts';
import type { Page, TextMatch } from '../domain/search.ts';

export interface RoleFilters {
  key?: TextMatch;
  displayName?: TextMatch;
}

/** Roles of one project, by key (the primary key's order, so no index of its own is needed). */
export function searchRoleRows(
  db: Queryable,
  projectId: string,
  filters: RoleFilters[],
  page: Page,
): Promise<{ total: number; rows: Array<{ role_key: string; display_name: string }> }> {
  const conditions = new Conditions();
  conditions.add(`r.project_id = ${conditions.param(projectId)}`);
  for (const filter of filters) {
    if (filter.key) conditions.text('r.role_key', filter.key);
    if (filter.displayName) conditions.text('r.display_name', filter.displayName);
  }
  return pagedRows(db, { columns: 'r.role_key, r.display_name', table: 'project_roles r', conditions, orderBy: ['r.role_key'], page });
}

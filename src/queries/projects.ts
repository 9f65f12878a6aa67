import type { Queryable } from '../storage/database.ts';
import { readDetails, type WriteDetails } from '../storage/event-log.ts';
import { findProject, projectRoles, type ProjectRow } from '../storage/projects.ts';
import { NotFound } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { requireOrgOwner } from '../domain/permissions.ts';
import { searchRoleRows } from '../storage/project-role-search.ts';
import { pageOf, textMatch, type PageRequest, type SearchResult, type TextMethod } from '../domain/search.ts';

/** A project of the acting org; projects of other orgs are "not found" there. */
export async function projectOfOrg(db: Queryable, orgId: string, projectId: string): Promise<ProjectRow> {
  const project = await findProject(db, projectId);
  if (!project || project.org_id !== orgId) throw new NotFound('project not found');
  return project;
}

export interface ProjectView {
  id: string;
  name: string;
  details: WriteDetails;
  roles: Array<{ roleKey: string; displayName: string }>;
}

/** `GET /management/v1/projects/{id}`: the project with its roles. */
export async function getProject(db: Queryable, actor: Principal, orgId: string, projectId: string): Promise<ProjectView> {
  requireOrgOwner(actor, orgId);
  const project = await projectOfOrg(db, orgId, projectId);
  const roles = await projectRoles(db, project.id);
  return {
    id: project.id,
    name: project.name,
    details: readDetails(project, project.org_id),
    roles: roles.map((r) => ({ roleKey: r.role_key, displayName: r.display_name })),
  };
}

export interface RoleQuery {
  keyQuery?: { key: string; method?: TextMethod };
  displayNameQuery?: { displayName: string; method?: TextMethod };
}

/** `POST …/projects/{id}/roles/_search`: one page of the project's roles. */
export async function searchRoles(
  db: Queryable,
  actor: Principal,
  orgId: string,
  projectId: string,
  request: { query?: PageRequest; queries?: RoleQuery[] },
): Promise<SearchResult<{ key: string; displayName: string }>> {
  requireOrgOwner(actor, orgId);
  await projectOfOrg(db, orgId, projectId);
  const filters = (request.queries ?? []).map((q) => ({
    ...(q.keyQuery && { key: textMatch(q.keyQuery.key, q.keyQuery.method) }),
    ...(q.displayNameQuery && { displayName: textMatch(q.displayNameQuery.displayName, q.displayNameQuery.method) }),
  }));
  const { total, rows } = await searchRoleRows(db, projectId, filters, pageOf(request.query));
  return {
    details: { totalResult: String(total), viewTimestamp: new Date().toISOString() },
    result: rows.map((r) => ({ key: r.role_key, displayName: r.display_name })),
  };
}

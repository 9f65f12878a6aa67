import type { Database, Queryable } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { addProject, addProjectRole, findProject, projectRoleExists, type ProjectRow } from '../storage/projects.ts';
import { AlreadyExists, NotFound, PermissionDenied } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { mayActInOrg, type Principal } from '../domain/roles.ts';

/** Projects and their apps are the org owner's business. */
export function requireOrgOwner(actor: Principal, orgId: string): void {
  if (!mayActInOrg(actor, orgId, 'ORG_OWNER')) throw new PermissionDenied('managing projects and apps requires ORG_OWNER');
}

/** A project of the acting org; projects of other orgs are "not found" there. */
export async function projectOfOrg(db: Queryable, orgId: string, projectId: string): Promise<ProjectRow> {
  const project = await findProject(db, projectId);
  if (!project || project.org_id !== orgId) throw new NotFound('project not found');
  return project;
}

export async function createProject(db: Database, actor: Principal, orgId: string, input: { name: string }): Promise<{ id: string; details: WriteDetails }> {
  requireOrgOwner(actor, orgId);
  const id = newId();
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    await addProject(write, { id, orgId, name: input.name });
    return { id, details: writeDetails(write, orgId) };
  });
}

export async function addRole(db: Database, actor: Principal, orgId: string, projectId: string, input: { roleKey: string; displayName?: string }): Promise<{ details: WriteDetails }> {
  requireOrgOwner(actor, orgId);
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    await projectOfOrg(tx, orgId, projectId);
    if (await projectRoleExists(tx, projectId, input.roleKey)) throw new AlreadyExists(`role "${input.roleKey}" already exists in this project`);
    await addProjectRole(write, { projectId, orgId, roleKey: input.roleKey, displayName: input.displayName || input.roleKey });
    return { details: writeDetails(write, orgId) };
  });
}

import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { addProject, addProjectRole, projectRoleExists } from '../storage/projects.ts';
import { projectOfOrg } from '../queries/projects.ts';
import { requireOrgOwner } from '../domain/permissions.ts';
import { AlreadyExists } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Principal } from '../domain/roles.ts';

export async function createProject(db: Database, actor: Principal, orgId: string, input: { name: string }): Promise<{ id: string; details: WriteDetails }> {
  requireOrgOwner(actor, orgId);
  const id = newId();
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    await addProject(write, { id, orgId, name: input.name });
    return { id, details: writeDetails(write, orgId) };
  });
}

export async function addRole(
  db: Database,
  actor: Principal,
  orgId: string,
  projectId: string,
  input: { roleKey: string; displayName?: string },
): Promise<{ details: WriteDetails }> {
  requireOrgOwner(actor, orgId);
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    await projectOfOrg(tx, orgId, projectId);
    if (await projectRoleExists(tx, projectId, input.roleKey)) throw new AlreadyExists(`role "${input.roleKey}" already exists in this project`);
    await addProjectRole(write, { projectId, orgId, roleKey: input.roleKey, displayName: input.displayName || input.roleKey });
    return { details: writeDetails(write, orgId) };
  });
}

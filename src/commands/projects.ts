import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type Write, type WriteDetails } from '../storage/event-log.ts';
import {
  addProject,
  addProjectRole,
  appIdsOfProject,
  changeProjectRole,
  projectNameTaken,
  projectRoleExists,
  removeProject,
  removeProjectRole,
  renameProject,
} from '../storage/projects.ts';
import { findApp, removeApp } from '../storage/apps.ts';
import { removeSamlApp, samlAppIdsOfProject } from '../storage/saml-apps.ts';
import type { Announce } from '../storage/invalidation.ts';
import { projectOfOrg } from '../queries/projects.ts';
import { requireOrgOwner } from '../domain/permissions.ts';
import { AlreadyExists, NotFound, PermissionDenied } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { hasInstanceRole, type Principal } from '../domain/roles.ts';

/** One write of the org owner in the acting org, answered with its details. */
async function ownerWrite(db: Database, actor: Principal, orgId: string, work: (write: Write) => Promise<void>): Promise<{ details: WriteDetails }> {
  requireOrgOwner(actor, orgId);
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    await work(write);
    return { details: writeDetails(write, orgId) };
  });
}

/** Names are unique within an org; checked after the write lock is taken, so two creates cannot both pass. */
async function assertNameFree(write: Write, orgId: string, name: string, projectId?: string): Promise<void> {
  if (await projectNameTaken(write.tx, orgId, name, projectId)) throw new AlreadyExists(`a project named "${name}" already exists in this organization`);
}

export async function createProject(db: Database, actor: Principal, orgId: string, input: { name: string }): Promise<{ id: string; details: WriteDetails }> {
  requireOrgOwner(actor, orgId);
  const id = newId();
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    await assertNameFree(write, orgId, input.name);
    await addProject(write, { id, orgId, name: input.name });
    return { id, details: writeDetails(write, orgId) };
  });
}

export async function changeProject(
  db: Database,
  actor: Principal,
  orgId: string,
  projectId: string,
  input: { name: string },
): Promise<{ details: WriteDetails }> {
  return ownerWrite(db, actor, orgId, async (write) => {
    await projectOfOrg(write.tx, orgId, projectId);
    await assertNameFree(write, orgId, input.name, projectId);
    await renameProject(write, { id: projectId, orgId, name: input.name });
  });
}

/**
 * Removes a project with its apps, roles and user grants. Its apps are
 * removed as `DELETE …/apps/{appId}` removes one: the client ends on every
 * node (announced), so its tokens are no longer accepted. A project holding
 * an app with instance API access is the instance owner's business, as the
 * app itself is.
 */
export async function deleteProject(
  deps: { db: Database; announce: Announce },
  actor: Principal,
  orgId: string,
  projectId: string,
): Promise<{ details: WriteDetails }> {
  requireOrgOwner(actor, orgId);
  const details = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const project = await projectOfOrg(tx, orgId, projectId);
    for (const appId of await appIdsOfProject(tx, projectId)) {
      const app = await findApp(tx, appId);
      if (app?.iam_api_access && !hasInstanceRole(actor, 'IAM_OWNER'))
        throw new PermissionDenied('only an instance owner (IAM_OWNER) may remove a project holding an app with iamApiAccess');
      await removeApp(write, { id: appId, projectId, orgId });
    }
    for (const appId of await samlAppIdsOfProject(tx, projectId)) await removeSamlApp(write, { id: appId, projectId, orgId });
    await removeProject(write, { id: projectId, orgId, name: project.name });
    return writeDetails(write, orgId);
  });
  deps.announce('clients');
  return { details };
}

export async function addRole(
  db: Database,
  actor: Principal,
  orgId: string,
  projectId: string,
  input: { roleKey: string; displayName?: string },
): Promise<{ details: WriteDetails }> {
  return ownerWrite(db, actor, orgId, async (write) => {
    await projectOfOrg(write.tx, orgId, projectId);
    if (await projectRoleExists(write.tx, projectId, input.roleKey)) throw new AlreadyExists(`role "${input.roleKey}" already exists in this project`);
    await addProjectRole(write, { projectId, orgId, roleKey: input.roleKey, displayName: input.displayName || input.roleKey });
  });
}

/** The role of a project of the acting org; an unknown key is "not found". */
async function roleOf(write: Write, orgId: string, projectId: string, roleKey: string): Promise<void> {
  await projectOfOrg(write.tx, orgId, projectId);
  if (!(await projectRoleExists(write.tx, projectId, roleKey))) throw new NotFound('role not found');
}

export async function changeRole(
  db: Database,
  actor: Principal,
  orgId: string,
  projectId: string,
  roleKey: string,
  input: { displayName: string },
): Promise<{ details: WriteDetails }> {
  return ownerWrite(db, actor, orgId, async (write) => {
    await roleOf(write, orgId, projectId, roleKey);
    await changeProjectRole(write, { projectId, orgId, roleKey, displayName: input.displayName });
  });
}

/** Removes a role; user grants keep their other roles (a grant may end with none, as one may be created). */
export async function removeRole(db: Database, actor: Principal, orgId: string, projectId: string, roleKey: string): Promise<{ details: WriteDetails }> {
  return ownerWrite(db, actor, orgId, async (write) => {
    await roleOf(write, orgId, projectId, roleKey);
    await removeProjectRole(write, { projectId, orgId, roleKey });
  });
}

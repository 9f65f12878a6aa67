import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import {
  addUserGrant as insertUserGrant,
  changeUserGrant as updateUserGrant,
  existingRoleKeys,
  findProjectOwner,
  findUserGrant,
  removeUserGrant as deleteUserGrant,
  userGrantExists,
} from '../storage/grants.ts';
import type { Queryable } from '../storage/database.ts';
import { AlreadyExists, InvalidArgument, NotFound, type FieldViolation } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Principal } from '../domain/roles.ts';
import { managedUser } from '../queries/get-user.ts';
import { assertMayManageUsers } from '../domain/permissions.ts';

/** Every role key must be defined on the project: 400 naming each one that is not. */
async function assertRolesOfProject(db: Queryable, projectId: string, roleKeys: string[]): Promise<void> {
  const defined = await existingRoleKeys(db, projectId, roleKeys);
  const unknown: FieldViolation[] = roleKeys.flatMap((key, i) =>
    defined.has(key) ? [] : [{ field: `roleKeys[${i}]`, description: `"${key}" is not a role of the project` }],
  );
  if (unknown.length) throw new InvalidArgument(`unknown role keys: ${unknown.map((v) => v.field).join(', ')}`, unknown);
}

export interface UserGrantInput {
  projectId: string;
  roleKeys: string[];
}

/**
 * `POST /management/v1/users/{userId}/grants`: roles of a project of the
 * acting org for one of its users; one grant per user and project.
 */
export async function addUserGrant(
  db: Database,
  actor: Principal,
  orgId: string,
  userId: string,
  input: UserGrantInput,
): Promise<{ userGrantId: string; details: WriteDetails }> {
  assertMayManageUsers(actor, orgId);
  const userGrantId = newId();
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await managedUser(tx, actor, orgId, userId);
    const project = await findProjectOwner(tx, input.projectId);
    if (!project || project.org_id !== orgId) throw new NotFound('project not found');
    await assertRolesOfProject(tx, input.projectId, input.roleKeys);
    if (await userGrantExists(tx, user.id, input.projectId)) throw new AlreadyExists('the user already has a grant on this project');
    await insertUserGrant(write, { id: userGrantId, userId: user.id, projectId: input.projectId, orgId, roleKeys: [...new Set(input.roleKeys)] });
    return { userGrantId, details: writeDetails(write, orgId) };
  });
}

/** A grant of a user of the acting org: 404 for an unknown grant or another user's. */
async function grantOf(db: Queryable, actor: Principal, orgId: string, userId: string, grantId: string) {
  const user = await managedUser(db, actor, orgId, userId);
  const grant = await findUserGrant(db, user.id, grantId);
  if (!grant) throw new NotFound('user grant not found');
  return grant;
}

/** `PUT /management/v1/users/{userId}/grants/{grantId}`: the grant's roles, replaced; each must be a role of its project. */
export async function changeUserGrant(
  db: Database,
  actor: Principal,
  orgId: string,
  userId: string,
  grantId: string,
  input: { roleKeys: string[] },
): Promise<{ details: WriteDetails }> {
  assertMayManageUsers(actor, orgId);
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const grant = await grantOf(tx, actor, orgId, userId, grantId);
    await assertRolesOfProject(tx, grant.project_id, input.roleKeys);
    await updateUserGrant(write, { id: grant.id, userId, orgId, roleKeys: [...new Set(input.roleKeys)] });
    return { details: writeDetails(write, orgId) };
  });
}

/** `DELETE /management/v1/users/{userId}/grants/{grantId}`: the user loses the grant's roles in the next tokens. */
export async function removeUserGrant(db: Database, actor: Principal, orgId: string, userId: string, grantId: string): Promise<{ details: WriteDetails }> {
  assertMayManageUsers(actor, orgId);
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const grant = await grantOf(tx, actor, orgId, userId, grantId);
    await deleteUserGrant(write, { id: grant.id, userId, orgId });
    return { details: writeDetails(write, orgId) };
  });
}

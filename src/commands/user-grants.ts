import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { addUserGrant as insertUserGrant, existingRoleKeys, findProjectOwner, userGrantExists } from '../storage/grants.ts';
import { AlreadyExists, InvalidArgument, NotFound, type FieldViolation } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Principal } from '../domain/roles.ts';
import { managedUser } from '../queries/get-user.ts';
import { assertMayManageUsers } from '../domain/permissions.ts';

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
    const defined = await existingRoleKeys(tx, input.projectId, input.roleKeys);
    const unknown: FieldViolation[] = input.roleKeys.flatMap((key, i) =>
      defined.has(key) ? [] : [{ field: `roleKeys[${i}]`, description: `"${key}" is not a role of the project` }],
    );
    if (unknown.length) throw new InvalidArgument(`unknown role keys: ${unknown.map((v) => v.field).join(', ')}`, unknown);
    if (await userGrantExists(tx, user.id, input.projectId)) throw new AlreadyExists('the user already has a grant on this project');
    await insertUserGrant(write, { id: userGrantId, userId: user.id, projectId: input.projectId, orgId, roleKeys: [...new Set(input.roleKeys)] });
    return { userGrantId, details: writeDetails(write, orgId) };
  });
}

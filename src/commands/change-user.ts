import type { Database } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { changeProfile as writeProfile, changeUserName as writeUserName, userNameTakenByOther } from '../storage/user-changes.ts';
import type { UserRow } from '../storage/users.ts';
import { AlreadyExists, InvalidArgument } from '../domain/errors.ts';
import { displayNameOf } from '../domain/users.ts';
import type { HumanInput } from './setup-org.ts';
import type { Principal } from '../domain/roles.ts';
import { assertMayManageUsers } from '../domain/permissions.ts';
import { managedUser, userToActOn } from '../queries/get-user.ts';

export type ProfileInput = HumanInput['profile'];

function assertHuman(user: UserRow, what: string): void {
  if (user.type !== 'human') throw new InvalidArgument(`${what} is for human users`);
}

/** `PUT /management/v1/users/{userId}/profile`: the human's profile, replaced as a whole (the display name defaulting as at creation). */
export async function changeProfile(db: Database, actor: Principal, orgId: string, userId: string, input: ProfileInput): Promise<{ details: WriteDetails }> {
  assertMayManageUsers(actor, orgId);
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await managedUser(tx, actor, orgId, userId);
    assertHuman(user, 'a profile');
    await writeProfile(
      write,
      { id: user.id, orgId },
      {
        firstName: input.firstName,
        lastName: input.lastName,
        nickName: input.nickName || null,
        displayName: displayNameOf(input),
        preferredLanguage: input.preferredLanguage || null,
        gender: input.gender ?? 'GENDER_UNSPECIFIED',
      },
    );
    return { details: writeDetails(write, orgId) };
  });
}

/**
 * `PUT /management/v1/users/{userId}/username`: a new login name, unique in
 * the org. The login name is what the user signs in with, so renaming it
 * follows the rule for another user's security state.
 */
export async function changeUserName(
  db: Database,
  announce: Announce,
  actor: Principal,
  orgId: string,
  userId: string,
  input: { userName: string },
): Promise<{ details: WriteDetails }> {
  assertMayManageUsers(actor, orgId);
  const result = await db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await userToActOn(tx, actor, orgId, userId);
    if (await userNameTakenByOther(tx, orgId, input.userName, user.id)) {
      throw new AlreadyExists(`a user named "${input.userName}" already exists in this organization`);
    }
    await writeUserName(write, { id: user.id, orgId, oldUserName: user.user_name }, input.userName);
    return { details: writeDetails(write, orgId) };
  });
  // The token paths read users from a cache, and a machine user is an engine client too.
  announce('users');
  announce('clients');
  return result;
}

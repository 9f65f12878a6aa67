import type { Database, Transaction } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import { beginWrite, type Write } from '../storage/event-log.ts';
import { userNameTaken } from '../storage/users.ts';
import { changeProfile, changeUserName, deactivateUser, reactivateUser, userNameTakenByOther } from '../storage/user-changes.ts';
import { changeEmail, changeExternalId, externalIdTakenByOther, findScimUser } from '../storage/scim-users.ts';
import { AlreadyExists, InvalidArgument, NotFound } from '../domain/errors.ts';
import { ScimInvalid } from '../domain/scim/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Principal } from '../domain/roles.ts';
import { assertMayManageUsers } from '../domain/permissions.ts';
import { passwordPolicyViolation } from '../domain/password-policy.ts';
import { actsOnSecurityState, changesBetween, type ScimUser, type StoredScimUser } from '../domain/scim/user.ts';
import { hashPassword } from '../security/passwords.ts';
import { managedUser, userToActOn } from '../queries/get-user.ts';
import { storedScimUser } from '../queries/scim-users.ts';
import { orgPasswordPolicy } from '../queries/password-policy.ts';
import { writeHuman, type OrgSettings } from './setup-org.ts';
import { removeUser } from './remove-user.ts';

// The writes of the SCIM API (docs/scim.md). Each request is one
// transaction, whatever it changes; each part it changes is written with
// the event the management API writes for it (user.human.added,
// user.username.changed, user.human.profile.changed, user.deactivated, …),
// plus the two changes only SCIM makes (externalId, email).

const UNIQUE_VIOLATION = '23505';

function taken(what: string): AlreadyExists {
  return new AlreadyExists(`another user of this organization already has this ${what}`);
}

/** Two requests racing for one userName or externalId: the unique index decides, and the loser hears 409 as if it had come second. */
async function uniquely<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if ((err as { code?: string }).code === UNIQUE_VIOLATION) throw taken('userName or externalId');
    throw err;
  }
}

async function reread(tx: Transaction, orgId: string, userId: string): Promise<StoredScimUser> {
  const row = await findScimUser(tx, orgId, userId);
  if (!row) throw new NotFound(`no User ${userId}`);
  return storedScimUser(row);
}

async function hashedPassword(db: Database, password: string | undefined, settings: OrgSettings, orgId: string): Promise<string | null> {
  if (password === undefined) return null;
  const violation = passwordPolicyViolation(password, await orgPasswordPolicy(db, settings.passwordComplexity, orgId));
  if (violation) throw new ScimInvalid('invalidValue', `password: ${violation}`);
  return hashPassword(password);
}

/** `POST /scim/v2/{orgId}/Users`: a human user of the org; `active: false` creates it deactivated. */
export async function createScimUser(
  db: Database,
  announce: Announce,
  settings: OrgSettings,
  actor: Principal,
  orgId: string,
  user: ScimUser,
  password?: string,
): Promise<StoredScimUser> {
  assertMayManageUsers(actor, orgId);
  const passwordHash = await hashedPassword(db, password, settings, orgId);
  const userId = newId();
  const created = await uniquely(() =>
    db.transaction(async (tx) => {
      const write = await beginWrite(tx, actor);
      if (await userNameTaken(tx, orgId, user.userName)) throw taken('userName');
      if (user.externalId !== null && (await externalIdTakenByOther(tx, orgId, user.externalId, userId))) throw taken('externalId');
      const profile = {
        firstName: user.givenName,
        lastName: user.familyName,
        ...(user.displayName === null ? {} : { displayName: user.displayName }),
        ...(user.nickName === null ? {} : { nickName: user.nickName }),
        ...(user.preferredLanguage === null ? {} : { preferredLanguage: user.preferredLanguage }),
      };
      await writeHuman(write, { userName: user.userName, profile, email: { email: user.email, isEmailVerified: true } }, { userId, orgId }, passwordHash);
      const ref = { id: userId, orgId };
      if (user.externalId !== null) await changeExternalId(write, ref, user.externalId);
      if (!user.active) await deactivateUser(write, ref);
      return reread(tx, orgId, userId);
    }),
  );
  if (!user.active) announce('users');
  return created;
}

/** Throws when the request's condition on the current user (RFC 7644 3.14 If-Match) is not met. */
export type Precondition = (current: StoredScimUser) => void;

/** Writes each changed part of the user with its event. */
async function writeChanges(write: Write, row: { id: string; orgId: string; gender: string | null }, before: StoredScimUser, after: ScimUser): Promise<void> {
  const changes = changesBetween(before, after);
  const ref = { id: row.id, orgId: row.orgId };
  if (changes.userName) {
    if (await userNameTakenByOther(write.tx, row.orgId, after.userName, row.id)) throw taken('userName');
    await changeUserName(write, { ...ref, oldUserName: before.userName }, after.userName);
  }
  if (changes.externalId) {
    if (after.externalId !== null && (await externalIdTakenByOther(write.tx, row.orgId, after.externalId, row.id))) throw taken('externalId');
    await changeExternalId(write, ref, after.externalId);
  }
  if (changes.profile) {
    await changeProfile(write, ref, {
      firstName: after.givenName,
      lastName: after.familyName,
      nickName: after.nickName,
      displayName: after.displayName ?? `${after.givenName} ${after.familyName}`,
      preferredLanguage: after.preferredLanguage,
      gender: row.gender ?? 'GENDER_UNSPECIFIED',
    });
  }
  if (changes.email) await changeEmail(write, ref, after.email);
  if (changes.active) await (after.active ? reactivateUser(write, ref) : deactivateUser(write, ref));
}

/**
 * `PUT` and `PATCH /scim/v2/{orgId}/Users/{id}`: `next` turns the user as
 * stored into the user as wanted (a PUT body, or the PATCH operations
 * applied), inside the transaction that writes the difference. A change of
 * the login name, the email or `active` acts on the user's sign-in, so the
 * caller must hold every role the user holds, and cannot make it on itself.
 * `precondition` (an If-Match) sees the user as locked for the change.
 */
export async function changeScimUser(
  db: Database,
  announce: Announce,
  actor: Principal,
  orgId: string,
  userId: string,
  next: (current: StoredScimUser) => ScimUser,
  precondition: Precondition = () => {},
): Promise<StoredScimUser> {
  assertMayManageUsers(actor, orgId);
  let securityState = false;
  const changed = await uniquely(() =>
    db.transaction(async (tx) => {
      const write = await beginWrite(tx, actor);
      const row = await findScimUser(tx, orgId, userId, true);
      if (!row) throw new NotFound(`no User ${userId}`);
      const before = storedScimUser(row);
      precondition(before);
      const after = next(before);
      const changes = changesBetween(before, after);
      securityState = actsOnSecurityState(changes);
      if (securityState && userId === actor.userId) throw new InvalidArgument('a user cannot change its own userName, email or active state');
      const user = securityState ? await userToActOn(tx, actor, orgId, userId) : await managedUser(tx, actor, orgId, userId);
      await writeChanges(write, { id: user.id, orgId, gender: user.gender }, before, after);
      return reread(tx, orgId, userId);
    }),
  );
  // The token paths read users from a per-node cache (tokens end with the user, docs/security.md).
  if (securityState) {
    announce('users');
    announce('clients');
  }
  return changed;
}

/**
 * `DELETE /scim/v2/{orgId}/Users/{id}`: the user removed as the management
 * API removes it, after `precondition` (an If-Match) has seen it locked.
 * Only human users are SCIM Users: a machine user of the org is not found.
 */
export async function removeScimUser(
  db: Database,
  announce: Announce,
  actor: Principal,
  orgId: string,
  userId: string,
  precondition: Precondition,
): Promise<void> {
  await removeUser(db, announce, actor, orgId, userId, async (tx) => {
    const row = await findScimUser(tx, orgId, userId, true);
    if (!row) throw new NotFound(`no User ${userId}`);
    precondition(storedScimUser(row));
  });
}

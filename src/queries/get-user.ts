import type { Queryable } from '../storage/database.ts';
import { readDetails, type WriteDetails } from '../storage/event-log.ts';
import { findUser, type UserRow } from '../storage/users.ts';
import { membershipsOf } from '../storage/memberships.ts';
import { machineKeysOf, personalAccessTokensOf, type CredentialRow } from '../storage/credentials.ts';
import { userGrantsOf } from '../storage/grants.ts';
import { InvalidArgument, NotFound, PermissionDenied } from '../domain/errors.ts';
import { loginName } from '../domain/users.ts';
import { mayActInOrg, type Principal } from '../domain/roles.ts';
import { assertMayManageUsers, holdsEveryRoleOf } from '../domain/permissions.ts';

export interface UserView {
  id: string;
  details: WriteDetails;
  state: string;
  userName: string;
  loginNames: string[];
  preferredLoginName: string;
  human?: {
    profile: { firstName: string; lastName: string; nickName: string; displayName: string; preferredLanguage: string; gender: string };
    email: { email: string; isEmailVerified: boolean };
    phone: { phone: string; isPhoneVerified: boolean };
    /** Whether the user has a password: an invited user has none until it sets one (docs/api/users.md). */
    passwordSet: boolean;
  };
  machine?: { name: string; description: string; accessTokenType: string };
}

const STATES: Record<string, string> = { active: 'USER_STATE_ACTIVE', inactive: 'USER_STATE_INACTIVE', locked: 'USER_STATE_LOCKED' };

/** The API view of a user: never a password hash or any other credential. */
export function toUserView(row: UserRow): UserView {
  const login = loginName(row.user_name, row.primary_domain);
  const view: UserView = {
    id: row.id,
    details: readDetails(row, row.org_id),
    state: STATES[row.state] ?? 'USER_STATE_UNSPECIFIED',
    userName: row.user_name,
    loginNames: [login],
    preferredLoginName: login,
  };
  if (row.type === 'human') {
    view.human = {
      profile: {
        firstName: row.first_name ?? '',
        lastName: row.last_name ?? '',
        nickName: row.nick_name ?? '',
        displayName: row.display_name ?? '',
        preferredLanguage: row.preferred_language ?? '',
        gender: row.gender ?? 'GENDER_UNSPECIFIED',
      },
      email: { email: row.email ?? '', isEmailVerified: row.email_verified ?? false },
      phone: { phone: row.phone ?? '', isPhoneVerified: row.phone_verified ?? false },
      passwordSet: row.password_set,
    };
  } else {
    view.machine = { name: row.name ?? '', description: row.description ?? '', accessTokenType: row.access_token_type ?? 'ACCESS_TOKEN_TYPE_BEARER' };
  }
  return view;
}

/** A user of the acting org; users of other orgs are "not found" there. */
export async function getUser(db: Queryable, actor: Principal, orgId: string, userId: string): Promise<UserView> {
  if (!mayActInOrg(actor, orgId, 'ORG_OWNER', 'ORG_USER_MANAGER') && actor.userId !== userId) {
    throw new PermissionDenied('reading users of this organization requires ORG_OWNER or ORG_USER_MANAGER');
  }
  const row = await findUser(db, userId);
  if (!row || row.org_id !== orgId) throw new NotFound('user not found');
  return toUserView(row);
}

// ---- who may manage which user (shared by the user commands)

/** A user of the acting org the actor may manage: 403 without the roles, 404 for an unknown user or one of another org. */
export async function managedUser(db: Queryable, actor: Principal, orgId: string, userId: string): Promise<UserRow> {
  assertMayManageUsers(actor, orgId);
  const row = await findUser(db, userId);
  if (!row || row.org_id !== orgId) throw new NotFound('user not found');
  return row;
}

/** Keys, client secrets and PATs belong to machine users only. */
export function assertMachine(user: UserRow, credentials: string): void {
  if (user.type !== 'machine') throw new InvalidArgument(`${credentials} are for machine users`);
}

/**
 * A user of the acting org whose credentials or security state the actor may
 * change: the actor manages the org's users and holds every role the user
 * holds (docs/security.md, "Acting on another user"); 403 otherwise.
 */
export async function userToActOn(db: Queryable, actor: Principal, orgId: string, userId: string): Promise<UserRow> {
  const user = await managedUser(db, actor, orgId, userId);
  if (!holdsEveryRoleOf(actor, await membershipsOf(db, user.id))) {
    throw new PermissionDenied(
      `user ${user.id} holds roles the caller does not hold; only a holder of those roles may act on its credentials or security state`,
    );
  }
  return user;
}

// ---- lists of a user's credentials and grants: never a secret or key material

export interface CredentialView {
  id: string;
  type?: 'KEY_TYPE_JSON';
  expirationDate?: string;
  details: WriteDetails;
}

function credentialView(row: CredentialRow, orgId: string, type?: 'KEY_TYPE_JSON'): CredentialView {
  return {
    id: row.id,
    ...(type ? { type } : {}),
    ...(row.expires_at ? { expirationDate: new Date(row.expires_at).toISOString() } : {}),
    details: readDetails({ sequence: row.sequence ?? '0', creation_date: row.created_at, change_date: row.created_at }, orgId),
  };
}

export async function listMachineKeys(db: Queryable, actor: Principal, orgId: string, userId: string): Promise<{ result: CredentialView[] }> {
  const user = await managedUser(db, actor, orgId, userId);
  assertMachine(user, 'keys');
  return { result: (await machineKeysOf(db, user.id)).map((row) => credentialView(row, orgId, 'KEY_TYPE_JSON')) };
}

export async function listPersonalAccessTokens(db: Queryable, actor: Principal, orgId: string, userId: string): Promise<{ result: CredentialView[] }> {
  const user = await managedUser(db, actor, orgId, userId);
  assertMachine(user, 'personal access tokens');
  return { result: (await personalAccessTokensOf(db, user.id)).map((row) => credentialView(row, orgId)) };
}

export interface UserGrantView {
  id: string;
  projectId: string;
  roleKeys: string[];
  details: WriteDetails;
}

export async function listUserGrants(db: Queryable, actor: Principal, orgId: string, userId: string): Promise<{ result: UserGrantView[] }> {
  const user = await managedUser(db, actor, orgId, userId);
  const rows = await userGrantsOf(db, user.id);
  return { result: rows.map((row) => ({ id: row.id, projectId: row.project_id, roleKeys: row.role_keys, details: readDetails(row, row.org_id) })) };
}

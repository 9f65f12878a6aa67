import type { Queryable } from '../storage/database.ts';
import { readDetails, type WriteDetails } from '../storage/event-log.ts';
import { findUser, type UserRow } from '../storage/users.ts';
import { NotFound, PermissionDenied } from '../domain/errors.ts';
import { loginName } from '../domain/users.ts';
import { mayActInOrg, type Principal } from '../domain/roles.ts';

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

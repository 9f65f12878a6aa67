import type { Queryable } from '../storage/database.ts';
import { findUser, type UserRow } from '../storage/users.ts';
import { rolesOfUser } from '../storage/grants.ts';

/** A user a SAML response may speak for, with their role keys in the app's project; none unless an active human. */
export async function samlSubjectOf(db: Queryable, userId: string, projectId: string): Promise<{ user: UserRow; roles: string[] } | undefined> {
  const user = await findUser(db, userId);
  if (user?.type !== 'human' || user.state !== 'active') return undefined;
  const roles = await rolesOfUser(db, userId, [projectId]);
  return { user, roles: [...new Set(roles.map((role) => role.roleKey))] };
}

/**
 * The attributes of the response (docs/saml.md): names as ZITADEL sends
 * them, so SP configurations written for it work unchanged.
 */
export function samlAttributes(user: UserRow, roles: string[]): Record<string, string[]> {
  const present = (value: string | null) => (value ? [value] : []);
  return {
    Email: present(user.email),
    FirstName: present(user.first_name),
    SurName: present(user.last_name),
    FullName: present(user.display_name || [user.first_name, user.last_name].filter(Boolean).join(' ')),
    UserName: [user.user_name],
    UserID: [user.id],
    Roles: roles,
  };
}

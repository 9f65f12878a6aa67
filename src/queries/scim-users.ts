import type { Queryable } from '../storage/database.ts';
import { findScimUser, listScimUsers, type ScimListQuery, type ScimUserRow } from '../storage/scim-users.ts';
import { NotFound } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { assertMayManageUsers } from '../domain/permissions.ts';
import type { StoredScimUser } from '../domain/scim/user.ts';

// The reads of the SCIM API (docs/scim.md): an org's human users, for
// callers who manage that org's users (ORG_OWNER, ORG_USER_MANAGER, or
// IAM_OWNER anywhere), as the domain's SCIM users.

export function storedScimUser(row: ScimUserRow): StoredScimUser {
  const givenName = row.first_name ?? '';
  const familyName = row.last_name ?? '';
  return {
    id: row.id,
    userName: row.user_name,
    externalId: row.external_id,
    givenName,
    familyName,
    displayName: row.display_name ?? `${givenName} ${familyName}`,
    nickName: row.nick_name,
    preferredLanguage: row.preferred_language,
    email: row.email ?? '',
    active: row.state !== 'inactive',
    created: new Date(row.creation_date),
    lastModified: new Date(row.change_date),
    version: String(row.sequence),
  };
}

/** One human user of the org; machine users and users of other orgs are not found. */
export async function getScimUser(db: Queryable, actor: Principal, orgId: string, userId: string): Promise<StoredScimUser> {
  assertMayManageUsers(actor, orgId);
  const row = await findScimUser(db, orgId, userId);
  if (!row) throw new NotFound(`no User ${userId}`);
  return storedScimUser(row);
}

export async function searchScimUsers(
  db: Queryable,
  actor: Principal,
  orgId: string,
  query: ScimListQuery,
): Promise<{ total: number; users: StoredScimUser[] }> {
  assertMayManageUsers(actor, orgId);
  const { total, rows } = await listScimUsers(db, orgId, query);
  return { total, users: rows.map(storedScimUser) };
}

import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

export interface Membership {
  scope: 'instance' | 'org';
  scope_id: string;
  roles: string[];
}

export async function addMembership(
  write: Write,
  member: { userId: string; scope: 'instance' | 'org'; scopeId: string; roles: string[]; resourceOwner: string },
): Promise<void> {
  await write.append({
    aggregateType: member.scope,
    aggregateId: member.scopeId,
    type: `${member.scope}.member.added`,
    resourceOwner: member.resourceOwner,
    payload: { userId: member.userId, roles: member.roles },
  });
  await write.tx.query('INSERT INTO memberships (user_id, scope, scope_id, roles) VALUES ($1, $2, $3, $4)', [
    member.userId,
    member.scope,
    member.scopeId,
    member.roles,
  ]);
}

export async function membershipsOf(db: Queryable, userId: string): Promise<Membership[]> {
  const { rows } = await db.query<Membership>('SELECT scope, scope_id, roles FROM memberships WHERE user_id = $1', [userId]);
  return rows;
}

export async function membershipExists(db: Queryable, member: { userId: string; scope: 'instance' | 'org'; scopeId: string }): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM memberships WHERE user_id = $1 AND scope = $2 AND scope_id = $3', [
    member.userId,
    member.scope,
    member.scopeId,
  ]);
  return rows.length > 0;
}

type Scope = { scope: 'instance' | 'org'; scopeId: string };

export async function membershipRoles(db: Queryable, member: Scope & { userId: string }): Promise<string[] | undefined> {
  const { rows } = await db.query<{ roles: string[] }>('SELECT roles FROM memberships WHERE user_id = $1 AND scope = $2 AND scope_id = $3', [
    member.userId,
    member.scope,
    member.scopeId,
  ]);
  return rows[0]?.roles;
}

/** How many members of the scope other than `userId` hold `role`. */
export async function otherHoldersOf(db: Queryable, scope: Scope, role: string, userId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM memberships WHERE scope = $1 AND scope_id = $2 AND $3 = ANY (roles) AND user_id <> $4',
    [scope.scope, scope.scopeId, role, userId],
  );
  return rows[0]!.n;
}

export async function changeMembership(write: Write, member: Scope & { userId: string; roles: string[]; resourceOwner: string }): Promise<void> {
  await write.append({
    aggregateType: member.scope,
    aggregateId: member.scopeId,
    type: `${member.scope}.member.changed`,
    resourceOwner: member.resourceOwner,
    payload: { userId: member.userId, roles: member.roles },
  });
  await write.tx.query('UPDATE memberships SET roles = $4 WHERE user_id = $1 AND scope = $2 AND scope_id = $3', [
    member.userId,
    member.scope,
    member.scopeId,
    member.roles,
  ]);
}

export async function removeMembership(write: Write, member: Scope & { userId: string; resourceOwner: string }): Promise<void> {
  await write.append({
    aggregateType: member.scope,
    aggregateId: member.scopeId,
    type: `${member.scope}.member.removed`,
    resourceOwner: member.resourceOwner,
    payload: { userId: member.userId },
  });
  await write.tx.query('DELETE FROM memberships WHERE user_id = $1 AND scope = $2 AND scope_id = $3', [member.userId, member.scope, member.scopeId]);
}

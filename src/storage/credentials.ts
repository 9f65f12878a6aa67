import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

export async function addPersonalAccessToken(write: Write, pat: { id: string; userId: string; orgId: string; digest: Buffer; expiresAt: Date | null }): Promise<void> {
  await write.append({ aggregateType: 'user', aggregateId: pat.userId, type: 'user.pat.added', resourceOwner: pat.orgId, payload: { tokenId: pat.id, expirationDate: pat.expiresAt?.toISOString() ?? null } });
  await write.tx.query('INSERT INTO personal_access_tokens (id, user_id, digest, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)', [pat.id, pat.userId, pat.digest, pat.expiresAt, write.at]);
}

/** The active user a PAT digest belongs to, if the PAT exists and has not expired. */
export async function findPatOwner(db: Queryable, digest: Buffer): Promise<{ user_id: string; org_id: string } | undefined> {
  const { rows } = await db.query<{ user_id: string; org_id: string }>(
    `SELECT p.user_id, u.org_id FROM personal_access_tokens p JOIN users u ON u.id = p.user_id
      WHERE p.digest = $1 AND (p.expires_at IS NULL OR p.expires_at > now()) AND u.state = 'active'`,
    [digest],
  );
  return rows[0];
}

export async function addMachineKey(write: Write, key: { id: string; userId: string; orgId: string; publicJwk: object; expiresAt: Date | null }): Promise<void> {
  await write.append({ aggregateType: 'user', aggregateId: key.userId, type: 'user.machine.key.added', resourceOwner: key.orgId, payload: { keyId: key.id, expirationDate: key.expiresAt?.toISOString() ?? null } });
  await write.tx.query('INSERT INTO machine_keys (id, user_id, public_jwk, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)', [key.id, key.userId, JSON.stringify(key.publicJwk), key.expiresAt, write.at]);
}

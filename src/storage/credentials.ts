import type { JWK } from 'jose';
import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';
import { touchUser, USER_MAY_ACT } from './users.ts';
import { digestsEqual, secretDigest } from '../security/secrets.ts';

// Machine credentials: personal access tokens, public keys (JWT profile) and
// the client secret (client_credentials). Secrets are kept only as keyed
// digests; no event ever carries a secret or a key.

/** A credential as listed: never its value. `sequence` is the position of the event that added it. */
export interface CredentialRow {
  id: string;
  expires_at: Date | null;
  created_at: Date;
  sequence: string;
}

// ---- personal access tokens

export async function addPersonalAccessToken(
  write: Write,
  pat: { id: string; userId: string; orgId: string; digest: Buffer; expiresAt: Date | null },
): Promise<void> {
  await write.append({
    aggregateType: 'user',
    aggregateId: pat.userId,
    type: 'user.pat.added',
    resourceOwner: pat.orgId,
    payload: { tokenId: pat.id, expirationDate: pat.expiresAt?.toISOString() ?? null },
  });
  await write.tx.query('INSERT INTO personal_access_tokens (id, user_id, digest, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)', [
    pat.id,
    pat.userId,
    pat.digest,
    pat.expiresAt,
    write.at,
  ]);
}

export async function removePersonalAccessToken(write: Write, pat: { id: string; userId: string; orgId: string }): Promise<void> {
  await write.append({ aggregateType: 'user', aggregateId: pat.userId, type: 'user.pat.removed', resourceOwner: pat.orgId, payload: { tokenId: pat.id } });
  await write.tx.query('DELETE FROM personal_access_tokens WHERE id = $1 AND user_id = $2', [pat.id, pat.userId]);
}

export async function personalAccessTokenExists(db: Queryable, userId: string, tokenId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM personal_access_tokens WHERE id = $1 AND user_id = $2', [tokenId, userId]);
  return rows.length > 0;
}

export async function personalAccessTokensOf(db: Queryable, userId: string): Promise<CredentialRow[]> {
  const { rows } = await db.query<CredentialRow>(
    `SELECT p.id, p.expires_at, p.created_at, ${addedAt('user.pat.added', 'tokenId', 'p')} AS sequence
       FROM personal_access_tokens p WHERE p.user_id = $1 ORDER BY p.created_at, p.id`,
    [userId],
  );
  return rows;
}

/** The user a PAT digest belongs to, while it may act (domain/may-act.ts), if the PAT exists and has not expired. */
export async function findPatOwner(db: Queryable, digest: Buffer): Promise<{ user_id: string; org_id: string } | undefined> {
  const { rows } = await db.query<{ user_id: string; org_id: string }>(
    `SELECT p.user_id, u.org_id FROM personal_access_tokens p JOIN users u ON u.id = p.user_id JOIN orgs o ON o.id = u.org_id
      WHERE p.digest = $1 AND (p.expires_at IS NULL OR p.expires_at > now()) AND ${USER_MAY_ACT}`,
    [digest],
  );
  return rows[0];
}

// ---- machine keys

export async function addMachineKey(
  write: Write,
  key: { id: string; userId: string; orgId: string; publicJwk: object; expiresAt: Date | null },
): Promise<void> {
  await write.append({
    aggregateType: 'user',
    aggregateId: key.userId,
    type: 'user.machine.key.added',
    resourceOwner: key.orgId,
    payload: { keyId: key.id, expirationDate: key.expiresAt?.toISOString() ?? null },
  });
  await write.tx.query('INSERT INTO machine_keys (id, user_id, public_jwk, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)', [
    key.id,
    key.userId,
    JSON.stringify(key.publicJwk),
    key.expiresAt,
    write.at,
  ]);
}

export async function removeMachineKey(write: Write, key: { id: string; userId: string; orgId: string }): Promise<void> {
  await write.append({
    aggregateType: 'user',
    aggregateId: key.userId,
    type: 'user.machine.key.removed',
    resourceOwner: key.orgId,
    payload: { keyId: key.id },
  });
  await write.tx.query('DELETE FROM machine_keys WHERE id = $1 AND user_id = $2', [key.id, key.userId]);
}

export async function machineKeyExists(db: Queryable, userId: string, keyId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM machine_keys WHERE id = $1 AND user_id = $2', [keyId, userId]);
  return rows.length > 0;
}

export async function machineKeysOf(db: Queryable, userId: string): Promise<CredentialRow[]> {
  const { rows } = await db.query<CredentialRow>(
    `SELECT k.id, k.expires_at, k.created_at, ${addedAt('user.machine.key.added', 'keyId', 'k')} AS sequence
       FROM machine_keys k WHERE k.user_id = $1 ORDER BY k.created_at, k.id`,
    [userId],
  );
  return rows;
}

/**
 * The public JWK a JWT profile assertion must be signed with: a registered key
 * of `userId`, a machine user who may act (domain/may-act.ts), with the time
 * it expires (null: never); its expiry is the caller's to check.
 */
export async function findMachineKeyOfActiveUser(
  db: Queryable,
  userId: string,
  keyId: string,
): Promise<{ publicJwk: JWK; expiresAt: Date | null } | undefined> {
  const { rows } = await db.query<{ public_jwk: JWK | string; expires_at: Date | null }>(
    `SELECT k.public_jwk, k.expires_at FROM machine_keys k JOIN users u ON u.id = k.user_id JOIN orgs o ON o.id = u.org_id
      WHERE k.id = $1 AND k.user_id = $2 AND u.type = 'machine' AND ${USER_MAY_ACT}`,
    [keyId, userId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return { publicJwk: typeof row.public_jwk === 'string' ? (JSON.parse(row.public_jwk) as JWK) : row.public_jwk, expiresAt: row.expires_at };
}

// ---- client secret of a machine user

export async function setMachineSecret(write: Write, machine: { userId: string; orgId: string; digest: Buffer }): Promise<void> {
  const sequence = await write.append({ aggregateType: 'user', aggregateId: machine.userId, type: 'user.machine.secret.set', resourceOwner: machine.orgId });
  await write.tx.query('UPDATE users SET secret_digest = $2 WHERE id = $1', [machine.userId, machine.digest]);
  await touchUser(write, machine.userId, sequence);
}

export async function removeMachineSecret(write: Write, machine: { userId: string; orgId: string }): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: machine.userId,
    type: 'user.machine.secret.removed',
    resourceOwner: machine.orgId,
  });
  await write.tx.query('UPDATE users SET secret_digest = NULL WHERE id = $1', [machine.userId]);
  await touchUser(write, machine.userId, sequence);
}

export async function hasMachineSecret(db: Queryable, userId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM users WHERE id = $1 AND secret_digest IS NOT NULL', [userId]);
  return rows.length > 0;
}

const NO_DIGEST = Buffer.alloc(32);

/**
 * The client_credentials check (docs/api/users.md): `clientId` is the machine
 * user's userName — accepted bare only when exactly one active machine user
 * in the instance has it — or its full login name `userName@primaryDomain`.
 * The digests are compared in constant time, and a digest is compared even
 * when nobody matches, so timing does not tell unknown clients from wrong
 * secrets.
 */
export async function verifyMachineSecret(
  db: Queryable,
  secretKey: Buffer,
  clientId: string,
  secret: string,
): Promise<{ userId: string; orgId: string } | undefined> {
  const candidates = clientId.length <= 500 ? await findMachinesByClientId(db, clientId) : [];
  const match = candidates.find((c) => c.full_match) ?? (candidates.length === 1 ? candidates[0] : undefined);
  const stored = match?.secret_digest ? Buffer.from(match.secret_digest) : NO_DIGEST;
  const equal = digestsEqual(secretDigest(secretKey, secret), stored);
  return equal && match?.secret_digest ? { userId: match.id, orgId: match.org_id } : undefined;
}

export interface MachineClientRow {
  id: string;
  org_id: string;
  secret_digest: Uint8Array | null;
  access_token_type: string | null;
  full_match: boolean;
}

/** Machine users who may act (domain/may-act.ts) a client_id may name: `userName@primaryDomain`, or a bare userName. */
export async function findMachinesByClientId(db: Queryable, clientId: string): Promise<MachineClientRow[]> {
  const { rows } = await db.query<MachineClientRow>(
    `SELECT u.id, u.org_id, u.secret_digest, u.access_token_type, lower(u.user_name || '@' || d.domain) = lower($1) AS full_match
       FROM users u JOIN orgs o ON o.id = u.org_id JOIN org_domains d ON d.org_id = u.org_id AND d.is_primary
      WHERE u.type = 'machine' AND ${USER_MAY_ACT}
        AND (lower(u.user_name || '@' || d.domain) = lower($1) OR lower(u.user_name) = lower($1))`,
    [clientId],
  );
  return rows;
}

/** A machine user who may act, by id, with what its engine client needs. */
export async function findMachineById(db: Queryable, userId: string): Promise<{ id: string; org_id: string; access_token_type: string | null } | undefined> {
  const { rows } = await db.query<{ id: string; org_id: string; access_token_type: string | null }>(
    `SELECT u.id, u.org_id, u.access_token_type FROM users u JOIN orgs o ON o.id = u.org_id WHERE u.id = $1 AND u.type = 'machine' AND ${USER_MAY_ACT}`,
    [userId],
  );
  return rows[0];
}

/** SQL for the position of the event that added a credential (its `details.sequence`). */
function addedAt(eventType: string, idField: string, alias: string): string {
  return `(SELECT max(e.position) FROM events e
            WHERE e.aggregate_type = 'user' AND e.aggregate_id = ${alias}.user_id
              AND e.event_type = '${eventType}' AND e.payload->>'${idField}' = ${alias}.id)::text`;
}

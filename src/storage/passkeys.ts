import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

// A user's passkeys (migration 0021): public keys only, nothing secret.

export interface PasskeyRow {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: Uint8Array;
  counter: string;
  transports: string[];
  name: string;
  created_at: Date;
}

const COLUMNS = 'id, user_id, credential_id, public_key, counter, transports, name, created_at';

export async function passkeysOf(db: Queryable, userId: string): Promise<PasskeyRow[]> {
  const { rows } = await db.query<PasskeyRow>(`SELECT ${COLUMNS} FROM user_passkeys WHERE user_id = $1 ORDER BY created_at, id`, [userId]);
  return rows;
}

export async function findPasskeyByCredential(db: Queryable, credentialId: string): Promise<PasskeyRow | undefined> {
  const { rows } = await db.query<PasskeyRow>(`SELECT ${COLUMNS} FROM user_passkeys WHERE credential_id = $1`, [credentialId]);
  return rows[0];
}

export interface NewPasskey {
  id: string;
  credentialId: string;
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  name: string;
}

/** Stores a registered passkey (`user.passkey.added`); false when the credential is already registered. */
export async function addPasskey(write: Write, user: { id: string; orgId: string }, passkey: NewPasskey): Promise<boolean> {
  const { rowCount } = await write.tx.query(
    `INSERT INTO user_passkeys (id, user_id, credential_id, public_key, counter, transports, name) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (credential_id) DO NOTHING`,
    [passkey.id, user.id, passkey.credentialId, Buffer.from(passkey.publicKey), passkey.counter, passkey.transports, passkey.name],
  );
  if (rowCount !== 1) return false;
  await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.passkey.added',
    resourceOwner: user.orgId,
    payload: { passkeyId: passkey.id, name: passkey.name },
  });
  return true;
}

/** Removes one passkey of the user (`user.passkey.removed`); false when the user has no such passkey. */
export async function removePasskey(write: Write, user: { id: string; orgId: string }, passkeyId: string): Promise<boolean> {
  const { rowCount } = await write.tx.query('DELETE FROM user_passkeys WHERE id = $1 AND user_id = $2', [passkeyId, user.id]);
  if (rowCount !== 1) return false;
  await write.append({ aggregateType: 'user', aggregateId: user.id, type: 'user.passkey.removed', resourceOwner: user.orgId, payload: { passkeyId } });
  return true;
}

/**
 * Records the signature counter of an accepted assertion. An authenticator
 * that counts must count up (WebAuthn 6.1.1): a counter not above the stored
 * one means a cloned authenticator or a replay, and is refused. Authenticators
 * that do not count (0 both times, as passkeys synced between devices do) pass.
 */
export async function advanceCounter(db: Queryable, passkeyId: string, counter: number): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE user_passkeys SET counter = $2 WHERE id = $1 AND (counter < $2 OR (counter = 0 AND $2 = 0))', [
    passkeyId,
    counter,
  ]);
  return rowCount === 1;
}

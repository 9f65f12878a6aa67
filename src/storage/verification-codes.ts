import type { Queryable } from './database.ts';
import type { CodePurpose } from '../domain/verification-codes.ts';

// The codes of the self-service flows (migration 0032): digests only.

export interface StoredCode {
  id: string;
  typedDigest: Buffer;
  linkDigest: Buffer;
  expiresAt: Date;
  usedAt: Date | null;
}

export interface NewStoredCode {
  userId: string;
  purpose: CodePurpose;
  typedDigest: Buffer;
  linkDigest: Buffer;
  mailed: boolean;
  createdAt: Date;
  expiresAt: Date;
}

export async function insertCode(db: Queryable, code: NewStoredCode): Promise<void> {
  await db.query(
    `INSERT INTO verification_codes (user_id, purpose, typed_digest, link_digest, mailed, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [code.userId, code.purpose, code.typedDigest, code.linkDigest, code.mailed, code.createdAt, code.expiresAt],
  );
}

/** How many codes of this user and purpose went out in a message since `since`. */
export async function mailedSince(db: Queryable, userId: string, purpose: CodePurpose, since: Date): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    'SELECT count(*)::int AS count FROM verification_codes WHERE user_id = $1 AND purpose = $2 AND mailed AND created_at > $3',
    [userId, purpose, since],
  );
  return rows[0]?.count ?? 0;
}

/** Used or expired codes created before `before` are no longer needed, not even to count messages. */
export async function deleteSpentCodes(db: Queryable, userId: string, purpose: CodePurpose, before: Date, now: Date): Promise<void> {
  await db.query('DELETE FROM verification_codes WHERE user_id = $1 AND purpose = $2 AND created_at < $3 AND (used_at IS NOT NULL OR expires_at <= $4)', [
    userId,
    purpose,
    before,
    now,
  ]);
}

/** Every stored code of the user and purpose, newest first; `forUpdate` when the caller is about to use one. */
export async function codesOf(db: Queryable, userId: string, purpose: CodePurpose, forUpdate = false): Promise<StoredCode[]> {
  const { rows } = await db.query<{ id: string; typed_digest: Uint8Array; link_digest: Uint8Array; expires_at: Date; used_at: Date | null }>(
    `SELECT id::text AS id, typed_digest, link_digest, expires_at, used_at FROM verification_codes
      WHERE user_id = $1 AND purpose = $2 ORDER BY id DESC${forUpdate ? ' FOR UPDATE' : ''}`,
    [userId, purpose],
  );
  return rows.map((row) => ({
    id: row.id,
    typedDigest: Buffer.from(row.typed_digest),
    linkDigest: Buffer.from(row.link_digest),
    expiresAt: new Date(row.expires_at),
    usedAt: row.used_at ? new Date(row.used_at) : null,
  }));
}

/** A used code spends every other open code of the same user and purpose with it: one reset, one verification. */
export async function spendCodes(db: Queryable, userId: string, purpose: CodePurpose, at: Date): Promise<void> {
  await db.query('UPDATE verification_codes SET used_at = $3 WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL', [userId, purpose, at]);
}

/** The open codes of a purpose no longer count (a new email address makes the old verification codes void). */
export async function dropCodes(db: Queryable, userId: string, purpose: CodePurpose): Promise<void> {
  await db.query('DELETE FROM verification_codes WHERE user_id = $1 AND purpose = $2', [userId, purpose]);
}

/** Whether a sent code of the user and purpose is still open at `now` (a page shown again sends no second one). */
export async function openCodeSent(db: Queryable, userId: string, purpose: CodePurpose, now: Date): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM verification_codes WHERE user_id = $1 AND purpose = $2 AND mailed AND used_at IS NULL AND expires_at > $3 LIMIT 1',
    [userId, purpose, now],
  );
  return rows.length > 0;
}

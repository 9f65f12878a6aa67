import type { JWK } from 'jose';
import type { Queryable } from './database.ts';

// The signing_keys table (migration 0002): public JWKs in clear, private
// JWKs sealed by the caller (src/keys/sealing.ts). Rows only; the schedule's
// rules are in src/keys.

export interface SigningKeyRow {
  kid: string;
  alg: string;
  activates_at: Date;
  retires_at: Date | null;
}

export interface SealedSigningKeyRow extends SigningKeyRow {
  private_jwk: Uint8Array;
}

export async function insertSigningKeyRow(
  db: Queryable,
  key: { kid: string; alg: string; publicJwk: JWK; sealedPrivateJwk: Buffer; activatesAt: Date },
): Promise<void> {
  await db.query('INSERT INTO signing_keys (kid, alg, public_jwk, private_jwk, activates_at) VALUES ($1, $2, $3, $4, $5)', [
    key.kid,
    key.alg,
    JSON.stringify(key.publicJwk),
    key.sealedPrivateJwk,
    key.activatesAt,
  ]);
}

export async function hasUnretiredKey(db: Queryable): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM signing_keys WHERE retires_at IS NULL LIMIT 1');
  return rows.length > 0;
}

/** Keys not retired, or retired less than `retainFor` seconds before `now`: what is published. */
export async function publishedKeyRows(db: Queryable, retainFor: number, now: Date): Promise<SigningKeyRow[]> {
  const { rows } = await db.query<SigningKeyRow>(
    `SELECT kid, alg, activates_at, retires_at FROM signing_keys
      WHERE retires_at IS NULL OR retires_at > $1::timestamptz - make_interval(secs => $2)`,
    [now, retainFor],
  );
  return rows;
}

/** The same keys with their sealed private parts. */
export async function publishedSealedKeyRows(db: Queryable, retainFor: number, now: Date): Promise<SealedSigningKeyRow[]> {
  const { rows } = await db.query<SealedSigningKeyRow>(
    `SELECT kid, alg, private_jwk, activates_at, retires_at FROM signing_keys
      WHERE retires_at IS NULL OR retires_at > $1::timestamptz - make_interval(secs => $2)`,
    [now, retainFor],
  );
  return rows;
}

/** Keys not retired yet, oldest activation first. */
export async function unretiredKeyRows(db: Queryable): Promise<SigningKeyRow[]> {
  const { rows } = await db.query<SigningKeyRow>('SELECT kid, alg, activates_at, retires_at FROM signing_keys WHERE retires_at IS NULL ORDER BY activates_at');
  return rows;
}

export async function activateKeyAt(db: Queryable, kid: string, at: Date): Promise<void> {
  await db.query('UPDATE signing_keys SET activates_at = $2 WHERE kid = $1', [kid, at]);
}

export async function retireKeysAt(db: Queryable, kids: string[], at: Date): Promise<void> {
  await db.query('UPDATE signing_keys SET retires_at = $2 WHERE kid = ANY($1::text[])', [kids, at]);
}

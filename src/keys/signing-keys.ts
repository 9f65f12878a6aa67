import { generateKeyPair as generateKeyPairCb, type JsonWebKey } from 'node:crypto';
import { promisify } from 'node:util';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Database, Queryable } from '../storage/database.ts';
import { seal, unseal } from './sealing.ts';

const generateKeyPair = promisify(generateKeyPairCb);

export type SigningAlg = 'RS256';

/** A signing key as the engine takes it: the private JWK with kid, alg and use. */
export interface SigningKey {
  kid: string;
  alg: SigningAlg;
  privateJwk: JWK;
  activatesAt: Date;
  retiresAt: Date | null;
}

interface KeyRow {
  kid: string;
  alg: SigningAlg;
  private_jwk: Uint8Array;
  activates_at: Date;
  retires_at: Date | null;
}

export async function generateSigningKey(alg: SigningAlg = 'RS256'): Promise<{ kid: string; publicJwk: JWK; privateJwk: JWK }> {
  const { privateKey } = await generateKeyPair('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' }) as JsonWebKey as JWK;
  const kid = await calculateJwkThumbprint(jwk, 'sha256');
  const privateJwk: JWK = { ...jwk, kid, alg, use: 'sig' };
  const publicJwk: JWK = { kty: jwk.kty, n: jwk.n, e: jwk.e, kid, alg, use: 'sig' };
  return { kid, publicJwk, privateJwk };
}

export async function insertSigningKey(db: Queryable, sealingKey: Buffer, activatesAt: Date, alg: SigningAlg = 'RS256'): Promise<string> {
  const key = await generateSigningKey(alg);
  const sealed = seal(sealingKey, Buffer.from(JSON.stringify(key.privateJwk)), key.kid);
  await db.query('INSERT INTO signing_keys (kid, alg, public_jwk, private_jwk, activates_at) VALUES ($1, $2, $3, $4, $5)', [
    key.kid,
    alg,
    JSON.stringify(key.publicJwk),
    sealed,
    activatesAt,
  ]);
  return key.kid;
}

/**
 * Creates the first signing key unless one exists. Serialised by an advisory
 * lock so that nodes starting together create exactly one.
 */
export async function ensureSigningKey(db: Database, sealingKey: Buffer): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('portcullis.signing_keys.' || current_schema()))");
    const { rows } = await tx.query('SELECT 1 FROM signing_keys WHERE retires_at IS NULL LIMIT 1');
    if (rows.length === 0) await insertSigningKey(tx, sealingKey, new Date());
  });
}

/**
 * The keys to publish and sign with, ordered for the engine, which signs with
 * the first key of a given alg: the current key (newest already active)
 * first, then keys that will activate (published ahead of use), then retired
 * keys still needed to verify tokens they signed (`retainFor` seconds).
 */
export async function loadSigningKeys(db: Queryable, sealingKey: Buffer, retainFor: number, now = new Date()): Promise<SigningKey[]> {
  const { rows } = await db.query<KeyRow>(
    `SELECT kid, alg, private_jwk, activates_at, retires_at FROM signing_keys
      WHERE retires_at IS NULL OR retires_at > $1::timestamptz - make_interval(secs => $2)`,
    [now, retainFor],
  );
  const keys = rows.map((row) => ({
    kid: row.kid,
    alg: row.alg,
    privateJwk: JSON.parse(unseal(sealingKey, Buffer.from(row.private_jwk), row.kid).toString('utf8')) as JWK,
    activatesAt: new Date(row.activates_at),
    retiresAt: row.retires_at ? new Date(row.retires_at) : null,
  }));
  return orderForSigning(keys, now);
}

/** The public parts of signing keys, as published and as used to verify our own tokens. */
export function publicJwks(keys: JWK[]): { keys: JWK[] } {
  return { keys: keys.map(({ kty, n, e, kid, alg }) => ({ kty, n, e, kid, alg, use: 'sig' })) };
}

export function orderForSigning(keys: SigningKey[], now: Date): SigningKey[] {
  const t = now.getTime();
  const isActive = (k: SigningKey) => k.activatesAt.getTime() <= t && (!k.retiresAt || k.retiresAt.getTime() > t);
  const current = keys.filter(isActive).sort((a, b) => b.activatesAt.getTime() - a.activatesAt.getTime());
  const next = keys.filter((k) => k.activatesAt.getTime() > t).sort((a, b) => a.activatesAt.getTime() - b.activatesAt.getTime());
  const previous = keys.filter((k) => k.retiresAt && k.retiresAt.getTime() <= t).sort((a, b) => b.retiresAt!.getTime() - a.retiresAt!.getTime());
  return [...current, ...next, ...previous];
}

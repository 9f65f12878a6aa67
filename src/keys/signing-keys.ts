import { generateKeyPair as generateKeyPairCb, type JsonWebKey } from 'node:crypto';
import { promisify } from 'node:util';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Database, Queryable } from '../storage/database.ts';
import { lockForTransaction } from '../storage/advisory-lock.ts';
import { hasUnretiredKey, insertSigningKeyRow, publishedSealedKeyRows } from '../storage/signing-keys.ts';
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
  const sealedPrivateJwk = seal(sealingKey, Buffer.from(JSON.stringify(key.privateJwk)), key.kid);
  await insertSigningKeyRow(db, { kid: key.kid, alg, publicJwk: key.publicJwk, sealedPrivateJwk, activatesAt });
  return key.kid;
}

/**
 * Creates the first signing key unless one exists. Serialised by an advisory
 * lock so that nodes starting together create exactly one.
 */
export async function ensureSigningKey(db: Database, sealingKey: Buffer): Promise<void> {
  await db.transaction(async (tx) => {
    await lockForTransaction(tx, 'signing_keys');
    if (!(await hasUnretiredKey(tx))) await insertSigningKey(tx, sealingKey, new Date());
  });
}

/**
 * The keys to publish and sign with, ordered for the engine, which signs with
 * the first key of a given alg: the current key (newest already active)
 * first, then keys that will activate (published ahead of use), then retired
 * keys still needed to verify tokens they signed (`retainFor` seconds).
 */
export async function loadSigningKeys(db: Queryable, sealingKey: Buffer, retainFor: number, now = new Date()): Promise<SigningKey[]> {
  const rows = await publishedSealedKeyRows(db, retainFor, now);
  const keys = rows.map((row) => ({
    kid: row.kid,
    alg: row.alg as SigningAlg,
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

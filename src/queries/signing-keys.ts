import type { Queryable } from '../storage/database.ts';
import { publishedKeyRows } from '../storage/signing-keys.ts';
import { orderForSigning, type SigningKey } from '../keys/signing-keys.ts';

export interface SigningKeyView {
  kid: string;
  alg: string;
  status: 'current' | 'next' | 'previous';
  activatesAt: string;
  retiresAt: string | null;
}

/** The published keys, for the admin API (public data only). */
export async function listSigningKeys(db: Queryable, retainFor: number, now = new Date()): Promise<SigningKeyView[]> {
  const rows = await publishedKeyRows(db, retainFor, now);
  const keys = rows.map((r) => ({ kid: r.kid, alg: r.alg, activatesAt: new Date(r.activates_at), retiresAt: r.retires_at ? new Date(r.retires_at) : null }));
  const ordered = orderForSigning(keys as unknown as SigningKey[], now) as unknown as typeof keys;
  return ordered.map((k, i) => ({
    kid: k.kid,
    alg: k.alg,
    status: k.retiresAt && k.retiresAt <= now ? 'previous' : k.activatesAt > now ? 'next' : i === 0 ? 'current' : 'previous',
    activatesAt: k.activatesAt.toISOString(),
    retiresAt: k.retiresAt?.toISOString() ?? null,
  }));
}

import type { Queryable } from '../storage/database.ts';
import { orderForSigning, type SigningKey } from '../keys/signing-keys.ts';

interface ScheduleRow {
  kid: string;
  activates_at: Date;
  retires_at: Date | null;
}

/**
 * A cheap summary of what the JWKS should be right now — no decryption — so
 * every node can poll it and rebuild its engine only when it changes. Also
 * says whether the schedule needs housekeeping (a next key has become
 * current, or no next key exists).
 */
export async function keySchedule(db: Queryable, retainFor: number, now = new Date()): Promise<{ fingerprint: string; needsHousekeeping: boolean }> {
  const { rows } = await db.query<ScheduleRow>(
    `SELECT kid, activates_at, retires_at FROM signing_keys
      WHERE retires_at IS NULL OR retires_at > $1::timestamptz - make_interval(secs => $2)`,
    [now, retainFor],
  );
  const keys = rows.map((r) => ({ kid: r.kid, activatesAt: new Date(r.activates_at), retiresAt: r.retires_at ? new Date(r.retires_at) : null }) as SigningKey);
  const ordered = orderForSigning(keys, now);
  const unretired = rows.filter((r) => !r.retires_at);
  const activeCount = unretired.filter((r) => new Date(r.activates_at) <= now).length;
  const pendingCount = unretired.length - activeCount;
  return { fingerprint: ordered.map((k) => k.kid).join(','), needsHousekeeping: activeCount > 1 || pendingCount === 0 };
}

export interface SigningKeyView {
  kid: string;
  alg: string;
  status: 'current' | 'next' | 'previous';
  activatesAt: string;
  retiresAt: string | null;
}

/** The published keys, for the admin API (public data only). */
export async function listSigningKeys(db: Queryable, retainFor: number, now = new Date()): Promise<SigningKeyView[]> {
  const { rows } = await db.query<ScheduleRow & { alg: string }>(
    `SELECT kid, alg, activates_at, retires_at FROM signing_keys
      WHERE retires_at IS NULL OR retires_at > $1::timestamptz - make_interval(secs => $2)`,
    [now, retainFor],
  );
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

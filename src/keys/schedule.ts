import type { Queryable } from '../storage/database.ts';
import { publishedKeyRows } from '../storage/signing-keys.ts';
import { orderForSigning, type SigningKey } from './signing-keys.ts';

/**
 * A cheap summary of what the JWKS should be right now — no decryption — so
 * every node can poll it and rebuild its engine only when it changes. Also
 * says whether the schedule needs housekeeping (a next key has become
 * current, or no next key exists).
 */
export async function keySchedule(db: Queryable, retainFor: number, now = new Date()): Promise<{ fingerprint: string; needsHousekeeping: boolean }> {
  const rows = await publishedKeyRows(db, retainFor, now);
  const keys = rows.map((r) => ({ kid: r.kid, activatesAt: new Date(r.activates_at), retiresAt: r.retires_at ? new Date(r.retires_at) : null }) as SigningKey);
  const ordered = orderForSigning(keys, now);
  const unretired = rows.filter((r) => !r.retires_at);
  const activeCount = unretired.filter((r) => new Date(r.activates_at) <= now).length;
  const pendingCount = unretired.length - activeCount;
  return { fingerprint: ordered.map((k) => k.kid).join(','), needsHousekeeping: activeCount > 1 || pendingCount === 0 };
}

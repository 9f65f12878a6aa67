import type { Database, Queryable } from '../storage/database.ts';
import { lockForTransaction } from '../storage/advisory-lock.ts';
import { activateKeyAt, retireKeysAt, unretiredKeyRows, type SigningKeyRow } from '../storage/signing-keys.ts';
import { insertSigningKey } from './signing-keys.ts';

export interface RotationOptions {
  now?: Date;
  /** Seconds a key is current before the next one takes over (KEY_ROTATION_INTERVAL). */
  interval: number;
  /** Rotate now (on demand) instead of only when the schedule says so. */
  force?: boolean;
}

/**
 * Keeps the key schedule in shape: exactly one current key, the older active
 * ones retired (they stay published until their tokens expire), and a next
 * key published ahead of its use. On demand (`force`) the next key becomes
 * current at once. Serialised by an advisory lock; returns whether it changed
 * anything, so several nodes doing housekeeping together change it once.
 */
export function advanceSigningKeys(db: Database, sealingKey: Buffer, options: RotationOptions): Promise<boolean> {
  return db.transaction((tx) => advanceSigningKeysIn(tx, sealingKey, options));
}

/** The same, inside the caller's transaction (to log the rotation with it). */
export async function advanceSigningKeysIn(tx: Queryable, sealingKey: Buffer, options: RotationOptions): Promise<boolean> {
  const now = options.now ?? new Date();
  await lockForTransaction(tx, 'signing_keys');
  const rows = await unretiredKeyRows(tx);
  let active = rows.filter((r) => new Date(r.activates_at) <= now);
  const pending = rows.filter((r) => new Date(r.activates_at) > now);
  let changed = false;

  if (options.force) {
    if (pending[0]) {
      await activateKeyAt(tx, pending[0].kid, now);
      active = [...active, { ...pending[0], activates_at: now }];
      pending.shift();
    } else {
      const kid = await insertSigningKey(tx, sealingKey, now);
      active = [...active, { kid, alg: 'RS256', activates_at: now, retires_at: null }];
    }
    changed = true;
  }

  const newest = active.reduce<SigningKeyRow | undefined>((a, b) => (!a || new Date(b.activates_at) >= new Date(a.activates_at) ? b : a), undefined);
  const older = active.filter((r) => r !== newest);
  if (older.length) {
    // A key stops signing when its successor starts.
    await retireKeysAt(
      tx,
      older.map((r) => r.kid),
      newest ? new Date(newest.activates_at) : now,
    );
    changed = true;
  }
  if (pending.length === 0) {
    // The next key takes over one interval after the current one started;
    // after a long outage that moment may be past, then one interval from now.
    const intervalMs = options.interval * 1000;
    const due = (newest ? new Date(newest.activates_at).getTime() : now.getTime()) + intervalMs;
    await insertSigningKey(tx, sealingKey, new Date(due > now.getTime() ? due : now.getTime() + intervalMs));
    changed = true;
  }
  return changed;
}

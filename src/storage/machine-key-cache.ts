import type { JWK } from 'jose';
import type { Queryable } from './database.ts';
import { TtlCache } from './ttl-cache.ts';
import { findMachineKeyOfActiveUser } from './credentials.ts';

export const MACHINE_KEY_CACHE_TTL_MS = 3000;

/** The public key a machine user's assertion names, while the key is unexpired and the user active; undefined otherwise. */
export type MachineKeyLookup = (userId: string, keyId: string) => Promise<JWK | undefined>;

/**
 * Machine keys as the JWT profile grant reads them on every assertion (and
 * introspection and userinfo on every use of a token obtained with one).
 * Adding or deleting a key announces `clients`, a change of the user
 * `users`: both clear the cache on every node. A key's expiry is checked on
 * each look-up, never cached.
 */
export function machineKeyCache(db: Queryable): { lookup: MachineKeyLookup; clear(): void } {
  const keys = new TtlCache(
    (id: string) => {
      const [userId, keyId] = JSON.parse(id) as [string, string];
      return findMachineKeyOfActiveUser(db, userId, keyId);
    },
    { ttlMs: MACHINE_KEY_CACHE_TTL_MS },
  );
  return {
    async lookup(userId, keyId) {
      const key = await keys.get(JSON.stringify([userId, keyId]));
      if (!key || (key.expiresAt && key.expiresAt.getTime() <= Date.now())) return undefined;
      return key.publicJwk;
    },
    clear: () => keys.clear(),
  };
}

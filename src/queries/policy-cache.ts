import type { Queryable } from '../storage/database.ts';
import { TtlCache } from '../storage/ttl-cache.ts';
import type { EffectivePolicy, PolicyKind } from '../domain/policies/kind.ts';
import { effectivePolicy } from './policies.ts';

export const POLICY_CACHE_TTL_MS = 3000;

/**
 * `effectivePolicy` as the login pages read it, several times per sign-in
 * (the login-name page, the register link, the second-factor rule), kept
 * for a few seconds per kind and org. Setting or resetting a policy
 * announces `policies`, which clears the cache on every node. Callers only
 * read the policies they get.
 */
export function policyCache(db: Queryable): { effective: EffectivePolicy; clear(): void } {
  const byKind = new Map<PolicyKind<object>, TtlCache<string, object>>();
  return {
    effective<T extends object>(kind: PolicyKind<T>, orgId: string): Promise<T> {
      let cache = byKind.get(kind);
      if (!cache) {
        cache = new TtlCache((org: string) => effectivePolicy(db, kind, org), { ttlMs: POLICY_CACHE_TTL_MS });
        byKind.set(kind, cache);
      }
      return cache.get(orgId) as Promise<T>;
    },
    clear() {
      for (const cache of byKind.values()) cache.clear();
    },
  };
}

import type { Queryable } from './database.ts';
import { TtlCache } from './ttl-cache.ts';
import { findPolicies } from './policies.ts';
import { withDefaults, type PolicyKind } from '../domain/policies/kind.ts';

export const POLICY_CACHE_TTL_MS = 3000;

/** The policy of `kind` that applies to users of `orgId`: the org's override, else the instance default, else the built-in defaults. */
export type EffectivePolicy = <T extends object>(kind: PolicyKind<T>, orgId: string) => Promise<T>;

/**
 * Policies as the login pages read them, several times per sign-in (the
 * login-name page, the register link, the second-factor rule). Setting or
 * resetting a policy announces `policies`, which clears the cache on every
 * node.
 */
export function policyCache(db: Queryable): { effective: EffectivePolicy; clear(): void } {
  const settings = new TtlCache(
    async (id: string) => {
      const [kind, orgId] = JSON.parse(id) as [string, string];
      const { org, instance } = await findPolicies(db, kind, orgId);
      return (org ?? instance)?.settings;
    },
    { ttlMs: POLICY_CACHE_TTL_MS },
  );
  return {
    effective: async <T extends object>(kind: PolicyKind<T>, orgId: string) =>
      withDefaults(kind, (await settings.get(JSON.stringify([kind.name, orgId]))) as Partial<T> | undefined),
    clear: () => settings.clear(),
  };
}

import type { Queryable } from './database.ts';
import { TtlCache } from './ttl-cache.ts';
import { featureEnabled, type FeatureName } from './features.ts';

export const FEATURE_CACHE_TTL_MS = 3000;

/** Instance feature flags as the engine reads them on public paths (discovery, the token endpoint). */
export function featureCache(db: Queryable): TtlCache<FeatureName, boolean> {
  return new TtlCache((name) => featureEnabled(db, name), { ttlMs: FEATURE_CACHE_TTL_MS });
}

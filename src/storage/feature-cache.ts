import type { Queryable } from './database.ts';
import { featureEnabled, type FeatureName } from './features.ts';

export const FEATURE_CACHE_TTL_MS = 3000;

/**
 * Instance feature flags as the engine reads them on public paths
 * (discovery, the token endpoint): kept for a few seconds per node, cleared
 * on every node when a flag changes (Invalidation).
 */
export class FeatureCache {
  #db: Queryable;
  #entries = new Map<FeatureName, { enabled: Promise<boolean>; expiresAt: number }>();

  constructor(db: Queryable) {
    this.#db = db;
  }

  isEnabled(name: FeatureName): Promise<boolean> {
    const now = Date.now();
    const hit = this.#entries.get(name);
    if (hit && hit.expiresAt > now) return hit.enabled;
    const enabled = featureEnabled(this.#db, name);
    enabled.catch(() => this.#entries.delete(name));
    this.#entries.set(name, { enabled, expiresAt: now + FEATURE_CACHE_TTL_MS });
    return enabled;
  }

  clear(): void {
    this.#entries.clear();
  }
}

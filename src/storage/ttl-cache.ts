/**
 * Values read on hot paths, kept for a few seconds per node. Concurrent
 * misses of one key share one load; a failed load is not kept. Past
 * `maxEntries` the cache starts over rather than growing (garbage keys
 * cannot fill memory). Changes clear it on every node through Invalidation;
 * the TTL bounds staleness if a message is lost.
 */
export class TtlCache<K, V> {
  readonly #load: (key: K) => Promise<V>;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<K, { value: Promise<V>; expiresAt: number }>();

  constructor(load: (key: K) => Promise<V>, options: { ttlMs: number; maxEntries?: number }) {
    this.#load = load;
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = options.maxEntries ?? 10_000;
  }

  get(key: K): Promise<V> {
    const now = Date.now();
    const hit = this.#entries.get(key);
    if (hit && hit.expiresAt > now) return hit.value;
    const value = this.#load(key);
    value.catch(() => {
      if (this.#entries.get(key)?.value === value) this.#entries.delete(key);
    });
    if (this.#entries.size >= this.#maxEntries) this.#entries.clear();
    this.#entries.set(key, { value, expiresAt: now + this.#ttlMs });
    return value;
  }

  clear(): void {
    this.#entries.clear();
  }
}

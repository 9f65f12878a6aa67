import type { Adapter } from 'oidc-provider';

export type Store = 'postgres' | 'redis';

const METHODS = ['upsert', 'find', 'findByUid', 'findByUserCode', 'consume', 'destroy', 'revokeByGrantId', 'claim'] as const;

/**
 * Counts the failed calls of one store's adapter, for /metrics; the error
 * itself still reaches the engine, which answers 500.
 */
export function countStorageErrors(inner: Adapter, store: Store, onError: (store: Store) => void): Adapter {
  const proxy: Record<string, unknown> = {};
  for (const method of METHODS) {
    if (typeof (inner as unknown as Record<string, unknown>)[method] !== 'function') continue;
    proxy[method] = async (...args: unknown[]) => {
      try {
        return await ((inner as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!).apply(inner, args);
      } catch (err) {
        onError(store);
        throw err;
      }
    };
  }
  return proxy as unknown as Adapter;
}

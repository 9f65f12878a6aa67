import type { Adapter } from 'oidc-provider';
import { SHORT_LIVED_MODELS } from './index.ts';

const METHODS = ['upsert', 'find', 'findByUid', 'findByUserCode', 'consume', 'destroy', 'revokeByGrantId'] as const;

/**
 * Counts failed storage calls of the engine's adapters by store, for
 * /metrics; the error itself still reaches the engine, which answers 500.
 */
export function countStorageErrors(factory: (model: string) => Adapter, hasRedis: boolean, onError: (store: string) => void): (model: string) => Adapter {
  const wrapped = new Map<string, Adapter>();
  return (model) => {
    let adapter = wrapped.get(model);
    if (!adapter) {
      const inner = factory(model);
      const store = model === 'Client' ? 'postgres' : hasRedis && SHORT_LIVED_MODELS.has(model) ? 'redis' : 'postgres';
      const proxy: Record<string, unknown> = {};
      for (const method of METHODS) {
        proxy[method] = async (...args: unknown[]) => {
          try {
            return await (inner[method] as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
          } catch (err) {
            onError(store);
            throw err;
          }
        };
      }
      adapter = proxy as unknown as Adapter;
      wrapped.set(model, adapter);
    }
    return adapter;
  };
}

import type { Adapter } from 'oidc-provider';
import { asOutage, type StoreName } from '../src/storage/outage.ts';

export type Store = StoreName;

/** Every method an adapter of ours may have: the engine's and our additions (claim, rotate, upsertClaiming, findWithGrant). */
export const ADAPTER_METHODS = [
  'upsert',
  'find',
  'findByUid',
  'findByUserCode',
  'consume',
  'destroy',
  'revokeByGrantId',
  'claim',
  'rotate',
  'upsertClaiming',
  'findWithGrant',
] as const;

/**
 * One store's adapter as the engine sees it: a failed call is counted (for
 * /metrics), and a store that does not answer becomes StoreUnavailable,
 * which the engine answers with 503 temporarily_unavailable; any other
 * error still reaches the engine as it is (500).
 */
export function guardStorage(inner: Adapter, store: Store, onError?: (store: Store) => void): Adapter {
  const proxy: Record<string, unknown> = {};
  for (const method of ADAPTER_METHODS) {
    if (typeof (inner as unknown as Record<string, unknown>)[method] !== 'function') continue;
    proxy[method] = async (...args: unknown[]) => {
      try {
        return await (inner as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!.apply(inner, args);
      } catch (err) {
        onError?.(store);
        throw asOutage(store, err);
      }
    };
  }
  return proxy as unknown as Adapter;
}

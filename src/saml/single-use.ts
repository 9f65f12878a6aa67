import { randomBytes } from 'node:crypto';
import type { Adapter } from 'oidc-provider';

// Records the IdP keeps between two requests of one browser, in the
// engine-record storage (Redis, or PostgreSQL without Redis; adapters/),
// under a random id that travels with the browser and is taken once: two
// requests presenting the same id cannot both act on the record.

/** Our adapters' atomic "write unless present" (adapters/redis.ts, adapters/postgres.ts). */
export type ClaimingAdapter = Adapter & { claim?(id: string, payload: object, expiresIn: number): Promise<boolean> };

export interface SingleUseRecords<T extends object> {
  put(record: T): Promise<string>;
  /** The record, left in place: to check a request against it before taking it. */
  find(id: string): Promise<T | undefined>;
  take(id: string): Promise<T | undefined>;
}

const ID = /^[A-Za-z0-9_-]{32}$/;

export function singleUseRecords<T extends object>(store: ClaimingAdapter, ttlSeconds: number): SingleUseRecords<T> {
  const find = async (id: string): Promise<T | undefined> => {
    if (!ID.test(id)) return undefined;
    const found = (await store.find(id)) as (T & { consumed?: unknown }) | undefined;
    if (!found || found.consumed) return undefined;
    const { consumed: _consumed, ...record } = found;
    return record as T;
  };
  return {
    async put(record) {
      const id = randomBytes(24).toString('base64url');
      await store.upsert(id, { ...record } as Record<string, unknown>, ttlSeconds);
      return id;
    },
    find,
    async take(id) {
      const found = await find(id);
      if (!found) return undefined;
      if (store.claim && !(await store.claim(`taken.${id}`, { taken: true }, ttlSeconds))) return undefined;
      await store.consume(id);
      return found;
    },
  };
}

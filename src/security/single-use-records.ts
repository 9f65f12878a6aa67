import { randomBytes } from 'node:crypto';
import type { Adapter } from 'oidc-provider';

// Records kept between two requests of one browser, in the engine-record
// storage (Redis, or PostgreSQL without Redis; adapters/), under an id that
// travels with the browser and is taken once: two requests presenting the
// same id (a replay, on any node) cannot both act on the record.

/** Our adapters' atomic "write unless present" (adapters/redis.ts, adapters/postgres.ts). */
export type ClaimingAdapter = Adapter & { claim?(id: string, payload: object, expiresIn: number): Promise<boolean> };

export interface SingleUseRecords<T extends object> {
  /** Keeps `record` under a new random id, which it answers. */
  put(record: T): Promise<string>;
  /** Keeps `record` under an id the caller chose (a `state` it sends along). */
  putAs(id: string, record: T): Promise<void>;
  /** The record, left in place: to check a request against it before taking it. */
  find(id: string): Promise<T | undefined>;
  take(id: string): Promise<T | undefined>;
}

/** The ids `put` makes: 24 random bytes, base64url. */
const RANDOM_ID = /^[A-Za-z0-9_-]{32}$/;

export function singleUseRecords<T extends object>(store: ClaimingAdapter, ttlSeconds: number, idPattern = RANDOM_ID): SingleUseRecords<T> {
  const putAs = async (id: string, record: T) => {
    await store.upsert(id, { ...record } as Record<string, unknown>, ttlSeconds);
  };
  const find = async (id: string): Promise<T | undefined> => {
    if (!idPattern.test(id)) return undefined;
    const found = (await store.find(id)) as (T & { consumed?: unknown }) | undefined;
    if (!found || found.consumed) return undefined;
    const { consumed: _consumed, ...record } = found;
    return record as T;
  };
  return {
    async put(record) {
      const id = randomBytes(24).toString('base64url');
      await putAs(id, record);
      return id;
    },
    putAs,
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

import type { Queryable } from './database.ts';
import { findUser, type UserRow } from './users.ts';

export const USER_CACHE_TTL_MS = 3000;
const MAX_ENTRIES = 10_000;

/**
 * Users as the token endpoints read them on every request (claims,
 * introspection), kept for a few seconds per node. A change through the
 * admin API clears every node's cache at once (Invalidation); the TTL
 * bounds staleness if a message is lost. Logins and credential checks never
 * use it: they always read the database.
 */
export class UserCache {
  #db: Queryable;
  #entries = new Map<string, { user: UserRow | undefined; expiresAt: number }>();

  constructor(db: Queryable) {
    this.#db = db;
  }

  async get(id: string): Promise<UserRow | undefined> {
    const now = Date.now();
    const hit = this.#entries.get(id);
    if (hit && hit.expiresAt > now) return hit.user;
    const user = await findUser(this.#db, id);
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
    this.#entries.set(id, { user, expiresAt: now + USER_CACHE_TTL_MS });
    return user;
  }

  clear(): void {
    this.#entries.clear();
  }
}

import type { Queryable } from './database.ts';
import { TtlCache } from './ttl-cache.ts';
import { findUser, type UserRow } from './users.ts';

export const USER_CACHE_TTL_MS = 3000;

/**
 * Users as the token endpoints read them on every request (claims,
 * introspection). Logins and credential checks never use it: they always
 * read the database.
 */
export function userCache(db: Queryable): TtlCache<string, UserRow | undefined> {
  return new TtlCache((id) => findUser(db, id), { ttlMs: USER_CACHE_TTL_MS });
}

import type { Redis } from 'ioredis';
import type { Database } from '../src/storage/database.ts';
import { PostgresAdapter } from './postgres.ts';
import { RedisAdapter } from './redis.ts';
import { ClientAdapter, type ClientDirectory } from './clients.ts';

export { PostgresAdapter, deleteExpiredEngineRecords } from './postgres.ts';
export { RedisAdapter } from './redis.ts';

/**
 * Records that live minutes to hours, are written and read on every login or
 * token request, and whose loss costs at most a repeated login: Redis holds
 * them with a native TTL, so expiry needs no sweeper and the hot path keeps
 * off PostgreSQL.
 */
export const SHORT_LIVED_MODELS: ReadonlySet<string> = new Set([
  'Session',
  'Interaction',
  'AuthorizationCode',
  'AccessToken',
  'ClientCredentials',
  'ReplayDetection',
  'PushedAuthorizationRequest',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

export interface AdapterStores {
  db: Database;
  redis?: Redis;
  /** Our OIDC apps, served as the engine's `Client` model. */
  clients?: ClientDirectory;
}

/**
 * The engine's `adapter` setting. Everything else (Grant, RefreshToken,
 * Client, RegistrationAccessToken, …) is durable — a user's consent, a
 * months-long refresh token — and stays in PostgreSQL, where it is backed
 * up, queryable for audit and survives a Redis flush. Without Redis,
 * PostgreSQL holds the short-lived records too and the sweeper expires them.
 *
 * One adapter per model name is kept: they hold no state beyond the store
 * handle, and the engine may ask again whenever it is rebuilt.
 */
type EngineAdapter = PostgresAdapter | RedisAdapter | ClientAdapter;

export function createAdapterFactory(stores: AdapterStores): (model: string) => EngineAdapter {
  const adapters = new Map<string, EngineAdapter>();
  return (model) => {
    let adapter = adapters.get(model);
    if (!adapter) {
      adapter = model === 'Client' && stores.clients
        ? new ClientAdapter(stores.clients)
        : stores.redis && SHORT_LIVED_MODELS.has(model)
          ? new RedisAdapter(model, stores.redis)
          : new PostgresAdapter(model, stores.db);
      adapters.set(model, adapter);
    }
    return adapter;
  };
}

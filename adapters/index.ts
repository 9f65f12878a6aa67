import type { Adapter } from 'oidc-provider';
import type { RedisClient } from '../src/storage/redis.ts';
import type { Database } from '../src/storage/database.ts';
import { PostgresAdapter } from './postgres.ts';
import { RedisAdapter } from './redis.ts';
import { ClientAdapter, type ClientDirectory } from './clients.ts';
import { guardStorage, type Store } from './instrumented.ts';
import { GRANT_KEYED_MODELS, GrantKeyedAdapter } from './grant-keyed-adapter.ts';

export { PostgresAdapter, deleteExpiredEngineRecords } from './postgres.ts';
export { RedisAdapter } from './redis.ts';
export { singleTokenGrantId } from './grant-keyed-adapter.ts';

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
  // Polls of a device code (src/engine/device-flow.ts).
  'DevicePoll',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
  // Ours: single-use WebAuthn challenges (src/security/challenges.ts).
  'WebAuthnChallenge',
  // Ours: SAML requests waiting for their sign-in, and the ids of requests seen (src/saml/request-store.ts).
  'SamlRequest',
  'SamlRequestId',
  // Ours: what each SAML app of a session was told, and single logouts under way (src/saml/participants.ts, src/saml/logout-chain.ts).
  'SamlParticipant',
  'SamlLogout',
  // Ours: a login's trip to an external provider (src/security/external-login-states.ts).
  'ExternalLoginState',
  // Ours: a login's trip to a SAML IdP and the responses accepted (src/security/saml-login-states.ts).
  'SamlLoginState',
]);

export interface AdapterStores {
  db: Database;
  redis?: RedisClient;
  /** Our OIDC apps, served as the engine's `Client` model. */
  clients?: ClientDirectory;
  /** Told of every failed storage call, by store (for /metrics); an unreachable store's errors become StoreUnavailable either way. */
  onStorageError?: (store: Store) => void;
}

/**
 * The engine's `adapter` setting. Everything else (Grant, RefreshToken,
 * Client, RegistrationAccessToken, …) is durable — a user's consent, a
 * months-long refresh token — and stays in PostgreSQL, where it is backed
 * up, queryable for audit and survives a Redis flush. The exception is a
 * grant made for a single access token, which goes to Redis with its token
 * (grant-keyed-adapter.ts). Without Redis, PostgreSQL holds the short-lived
 * records too and the sweeper expires them.
 *
 * One adapter per model name is kept: they hold no state beyond the store
 * handle, and the engine may ask again whenever it is rebuilt.
 */
export function createAdapterFactory(stores: AdapterStores): (model: string) => Adapter {
  const { db, redis, clients, onStorageError } = stores;
  const guarded = (adapter: Adapter, store: Store): Adapter => guardStorage(adapter, store, onStorageError);
  const inPostgres = (model: string) => guarded(new PostgresAdapter(model, db), 'postgres');
  const adapters = new Map<string, Adapter>();
  return (model) => {
    let adapter = adapters.get(model);
    if (!adapter) {
      if (model === 'Client' && clients) adapter = guarded(new ClientAdapter(clients), 'postgres');
      else if (!redis) adapter = inPostgres(model);
      else if (SHORT_LIVED_MODELS.has(model)) adapter = guarded(new RedisAdapter(model, redis), 'redis');
      else if (GRANT_KEYED_MODELS.has(model)) adapter = new GrantKeyedAdapter(inPostgres(model), guarded(new RedisAdapter(model, redis), 'redis'));
      else adapter = inPostgres(model);
      adapters.set(model, adapter);
    }
    return adapter;
  };
}

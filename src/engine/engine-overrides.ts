import { createHash } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { errors } from 'oidc-provider';
import engineContext from 'oidc-provider/lib/helpers/als.js';
import { getDpopJwt } from 'oidc-provider/lib/helpers/validate_dpop.js';
import type { MachineKeyLookup } from '../storage/machine-key-cache.ts';
import { ADAPTER_METHODS } from '../../adapters/instrumented.ts';
import { digestsEqual, secretDigest } from '../security/secrets.ts';
import { looksLikeJwt, type JwtAccessTokens } from './jwt-access-tokens.ts';
import { boundKeyStillActive, type KeyBoundToken } from './key-bound-tokens.ts';
import { originSessionLives, type SessionBoundToken } from './exchanged-token-sessions.ts';
import type { LogoutDeliveries } from './backchannel-logout.ts';
import { HOOK_CLAIMS } from './token-hooks.ts';
import type {
  ClientClass,
  ReplayDetectionClass,
  Claim,
  ClaimingAdapter,
  RefreshTokenRecord,
  RefreshTokenClass,
  RecordStore,
  TokenClass,
  TokenRecord,
} from './patched-engine-types.ts';

/**
 * Every change this service makes to the engine's own classes, in the one
 * order they must be applied. Everything else is configuration
 * (configuration.ts) or middleware around the engine's endpoints
 * (rule-dispatch.ts). Each member patched here is listed in
 * PATCHED_MEMBERS; a test checks them on a bare engine, so an upgrade that
 * renames or drops one fails there instead of silently unpatching.
 */

/** Members of the engine's models that the overrides below replace, as `Model.member` or `Model.prototype.member`. */
export const PATCHED_MEMBERS = [
  'Client.prototype.responseTypeAllowed',
  'Client.prototype.compareClientSecret',
  'Client.Schema.prototype.invalidate',
  'Client.find',
  'AccessToken.prototype.getValueAndPayload',
  'ClientCredentials.prototype.getValueAndPayload',
  'AccessToken.find',
  'ClientCredentials.find',
  'RefreshToken.find',
  'Client.prototype.backchannelLogout',
  'ReplayDetection.unique',
  'RefreshToken.prototype.consume',
  'RefreshToken.prototype.save',
  'ClientCredentials.prototype.save',
  'RefreshToken.adapter',
  'Grant.adapter',
  'Claims.prototype.result',
] as const;

/** The member a PATCHED_MEMBERS entry names on a provider, or undefined when the engine has none. */
export function patchedMember(provider: Provider, path: (typeof PATCHED_MEMBERS)[number]): unknown {
  return path.split('.').reduce<unknown>((holder, key) => (holder as Record<string, unknown> | undefined)?.[key], provider);
}

// The engine refuses http and localhost redirect URIs for implicit web
// clients; apps in dev mode may use them (docs/api/projects-apps.md), so
// those two checks, and only those, are waived for them.
const DEV_MODE_WAIVERS = new Set(['implicit-force-https', 'implicit-forbid-localhost']);

export interface OverrideDeps {
  /** Key of the keyed digests that stand in for client secrets. */
  secretKey: Buffer;
  jwt: JwtAccessTokens;
  machineKeys: MachineKeyLookup;
  logouts: LogoutDeliveries;
}

export function overrideEngine(provider: Provider, deps: OverrideDeps): void {
  for (const path of PATCHED_MEMBERS) {
    if (patchedMember(provider, path) === undefined) throw new Error(`the OIDC engine has no ${path} to override`);
  }
  overrideClients(provider, deps.secretKey);
  overrideTokenFormat(provider, deps.jwt);
  overrideTokenLookups(provider, deps);
  overrideBackchannelLogout(provider, deps.logouts);
  overrideReplayDetection(provider);
  overrideRefreshRotation(provider);
  overrideRefreshReads(provider);
  overrideClaimResults(provider);
}

/** 1–4: how apps are checked and found. */
function overrideClients(provider: Provider, secretKey: Buffer): void {
  const Client = provider.Client as unknown as ClientClass;
  // 1. A response type the app is not set up for is `unauthorized_client`
  //    (RFC 6749 4.1.2.1); the engine says invalid_request. It is still
  //    sent to the redirect_uri.
  const responseTypeAllowed = Client.prototype.responseTypeAllowed;
  Client.prototype.responseTypeAllowed = function responseTypeAllowedOrUnauthorized(type: string) {
    if (responseTypeAllowed.call(this, type)) return true;
    throw new errors.UnauthorizedClient('requested response_type is not allowed for this client');
  };

  // 2. Client secrets are stored as keyed digests, never in clear: compare
  //    the digest of what the client presents with the stored one, in
  //    constant time.
  Client.prototype.compareClientSecret = function compareClientSecret(actual: string) {
    if (!this.clientSecret || typeof actual !== 'string') return false;
    return digestsEqual(Buffer.from(this.clientSecret, 'base64url'), secretDigest(secretKey, actual));
  };

  // 3. Dev-mode apps may use http and localhost redirect URIs for the
  //    implicit flow too.
  const invalidate = Client.Schema.prototype.invalidate;
  Client.Schema.prototype.invalidate = function waiveForDevMode(message: string, code?: string) {
    if (this.dev_mode && code && DEV_MODE_WAIVERS.has(code)) return;
    invalidate.call(this, message, code);
  };

  // 4. The engine caches built clients by a SHA-256 of their metadata's
  //    JSON, computed on every look-up (twice per token or introspection
  //    request). Our ClientDirectory hands out the same metadata object for
  //    as long as it caches an app, so the client built from it is reused by
  //    object identity instead; a changed app is a new object.
  const findClient: ClientClass['find'] = Client.find.bind(Client);
  const built = new WeakMap<object, Promise<unknown>>();
  Client.find = async (id) => {
    const metadata = typeof id === 'string' && id ? await Client.adapter.find(id) : undefined;
    if (!metadata) return findClient(id);
    let client = built.get(metadata);
    if (!client) {
      client = findClient(id);
      built.set(metadata, client);
    }
    return client;
  };
}

/** 5–8: JWT access tokens, handed out and found by their value. */
function overrideTokenFormat(provider: Provider, jwt: JwtAccessTokens): void {
  const AccessToken = provider.AccessToken as unknown as TokenClass;
  const ClientCredentials = provider.ClientCredentials as unknown as TokenClass;
  // 5, 6. Access tokens of apps and machine users set to JWT: the stored
  //    record keeps its opaque id as `jti`, the value handed out is the
  //    signed JWT (the engine's own JWT access tokens are not stored, so
  //    could be neither revoked nor introspected). Users' access tokens and
  //    machine users' client credentials alike.
  for (const model of [AccessToken, ClientCredentials]) {
    const opaqueValue = model.prototype.getValueAndPayload;
    model.prototype.getValueAndPayload = async function jwtOrOpaque(this: TokenRecord) {
      const stored = await opaqueValue.call(this);
      const asJwt = this.format_override ? this.format_override === 'jwt' : this.client?.access_token_type === 'jwt';
      if (!asJwt) return stored;
      const { iat, exp } = stored.payload as { iat: number; exp: number };
      return { value: await jwt.sign(this, iat, exp), payload: stored.payload };
    };
  }

  // 7, 8. Finding a token by its value: a JWT of ours is looked up by its
  //    `jti` (the record id); anything else as the engine does.
  for (const model of [AccessToken, ClientCredentials]) {
    const findStored = model.find.bind(model);
    model.find = async (value: string, options?: unknown) => {
      if (typeof value !== 'string' || !looksLikeJwt(value)) return findStored(value, options);
      const jti = await jwt.tokenIdOf(value);
      return jti ? findStored(jti, options) : undefined;
    };
  }
}

/** 9, 9a: tokens found only while what they depend on still holds. */
function overrideTokenLookups(provider: Provider, deps: OverrideDeps): void {
  const AccessToken = provider.AccessToken as unknown as TokenClass;
  // 9. A user's access token obtained with a machine key (JWT profile) is
  //    found only while that key is active: wraps 7, so it applies to both
  //    spellings of the token.
  const findAccessToken = AccessToken.find.bind(AccessToken);
  AccessToken.find = async (value, options) => {
    const token = (await findAccessToken(value, options)) as KeyBoundToken | undefined;
    return token && (await boundKeyStillActive(deps.machineKeys, token)) ? token : undefined;
  };

  // 9a. Access and refresh tokens issued by a token exchange (and refreshed
  //     from one) are found only while the browser session of the token
  //     they came from lives (exchanged-token-sessions.ts): they end at its
  //     logout and when all of the user's sessions are ended. Wraps 9. Only
  //     such tokens cost a session read.
  const RefreshTokens = provider.RefreshToken as unknown as TokenClass;
  for (const model of [AccessToken, RefreshTokens]) {
    const findBound = model.find.bind(model);
    model.find = async (value, options) => {
      const token = (await findBound(value, options)) as SessionBoundToken | undefined;
      return token && (await originSessionLives(provider, token)) ? token : undefined;
    };
  }
}

/** 10: back-channel logout in the background. */
function overrideBackchannelLogout(provider: Provider, logouts: LogoutDeliveries): void {
  const Client = provider.Client as unknown as ClientClass;
  // 10. Back-channel logout: the engine awaits every app's answer (up to its
  //     2.5 s timeout each) before the user's logout goes on, and tries
  //     once. Deliveries go to the background instead, with retries, their
  //     failures logged and counted (backchannel-logout.ts). The engine's
  //     backchannel.success event therefore only means "sent off".
  const backchannelLogout = Client.prototype.backchannelLogout;
  Client.prototype.backchannelLogout = function sendInBackground(sub: string, sid: string) {
    logouts.send(() => backchannelLogout.call(this, sub, sid), this.clientId);
    return Promise.resolve();
  };
}

/** 11, 12: replay records claimed atomically, with the client_credentials token where the store can. */
function overrideReplayDetection(provider: Provider): void {
  // 11. Replay detection (DPoP proofs, client assertions, JWT profile
  //     assertions): the engine looks the id up and then saves it, so two
  //     nodes given the same proof at once could both accept it. Our stores
  //     claim the id in one atomic step instead (adapters: a Redis script,
  //     PostgreSQL INSERT … ON CONFLICT), which is also one round trip
  //     instead of two. Same id as the engine's (models/replay_detection.js).
  //     A client_credentials request's DPoP proof is claimed together with
  //     the token's write where the store can (12).
  const ReplayDetection = provider.ReplayDetection as unknown as ReplayDetectionClass;
  const ClientCredentialsStore = provider.ClientCredentials as unknown as { adapter: ClaimingAdapter };
  const deferredClaims = new WeakMap<object, Claim>();
  const unique = ReplayDetection.unique.bind(ReplayDetection);
  ReplayDetection.unique = async (iss, jti, exp) => {
    const { adapter } = ReplayDetection;
    if (!adapter.claim) return unique(iss, jti, exp);
    const id = createHash('sha256').update(`${iss}${jti}`).digest('base64url');
    const now = Math.floor(Date.now() / 1000);
    const claim: Claim = { model: 'ReplayDetection', id, payload: { jti: id, iss, kind: 'ReplayDetection', iat: now, exp }, expiresIn: Math.max(1, exp - now) };
    const ctx = engineContext.getStore();
    if (ctx && ClientCredentialsStore.adapter.upsertClaiming && claimsWithToken(ctx, jti)) {
      deferredClaims.set(ctx, claim);
      return true;
    }
    return adapter.claim(claim.id, claim.payload, claim.expiresIn);
  };

  /** The proof of a client_credentials request: its token is the request's one write. */
  function claimsWithToken(ctx: KoaContextWithOIDC, jti: string): boolean {
    return ctx.oidc?.route === 'token' && ctx.oidc.params?.grant_type === 'client_credentials' && getDpopJwt(provider, ctx)?.payload.jti === jti;
  }

  // 12. A client_credentials token bound to a DPoP proof: the proof's
  //     replay record (11) and the token are written in one atomic step,
  //     the token only if the proof was not seen before — one store round
  //     trip where the engine makes two. A request that fails before its
  //     token is saved leaves the proof unclaimed, and issued nothing.
  const ClientCredentialsTokens = provider.ClientCredentials as unknown as { prototype: { save(): Promise<string> } };
  const saveClientCredentials = ClientCredentialsTokens.prototype.save;
  ClientCredentialsTokens.prototype.save = function saveClaimingProof(this: object) {
    const ctx = engineContext.getStore();
    const claim = ctx && deferredClaims.get(ctx);
    if (!claim) return saveClientCredentials.call(this);
    deferredClaims.delete(ctx);
    const store = ClientCredentialsStore.adapter;
    writeOnlyIf(this, (id, payload, expiresIn) => store.upsertClaiming!(claim, id, payload, expiresIn), 'DPoP proof JWT Replay detected');
    return saveClientCredentials.call(this);
  };
}

/** 13: refresh token rotation in one atomic step. */
function overrideRefreshRotation(provider: Provider): void {
  // 13. Refresh token rotation: the engine consumes the presented token and
  //     then saves its successor, two writes one after the other, and two
  //     requests presenting the same token at once could both pass the
  //     engine's "already used" check and both get a successor. Where the
  //     store can (PostgreSQL: one statement, adapters/postgres.ts `rotate`),
  //     the consumption waits for the successor's save and both happen in
  //     one atomic step that only the first of such requests wins; the other
  //     is invalid_grant, as a reused token is.
  const RefreshToken = provider.RefreshToken as unknown as RefreshTokenClass;
  const rotating = new WeakMap<object, RefreshTokenRecord>();
  const consume = RefreshToken.prototype.consume;
  RefreshToken.prototype.consume = function consumeWithSuccessor(this: RefreshTokenRecord) {
    const ctx = engineContext.getStore();
    const rotation = ctx?.oidc?.params?.grant_type === 'refresh_token' && ctx.oidc.entities.RefreshToken === this;
    if (!rotation || !RefreshToken.adapter.rotate) return consume.call(this);
    rotating.set(ctx, this);
    return Promise.resolve();
  };
  const save = RefreshToken.prototype.save;
  RefreshToken.prototype.save = function saveAsSuccessor(this: RefreshTokenRecord) {
    const ctx = engineContext.getStore();
    const predecessor = ctx && rotating.get(ctx);
    if (!predecessor) return save.call(this);
    rotating.delete(ctx);
    const store = RefreshToken.adapter;
    writeOnlyIf(
      this,
      async (id, payload, expiresIn) => {
        const rotated = await store.rotate!(predecessor.jti, id, payload, expiresIn);
        if (rotated) predecessor.emit('consumed');
        return rotated;
      },
      'refresh token already used',
    );
    return save.call(this);
  };
}

/** 14: the refresh grant's token and grant read in one round trip. */
function overrideRefreshReads(provider: Provider): void {
  // 14. The refresh token grant reads the presented token and then its
  //     grant: two round trips to PostgreSQL. Where the store can, the
  //     token's read brings its grant along (one statement) and the grant
  //     read of the same request is answered from that. Only the models'
  //     own look-ups (their static `adapter`) change; saves and the other
  //     endpoints read as before.
  const readAlong = new WeakMap<object, { id: string; payload: object }>();
  const refreshTokenStore = (provider.RefreshToken as unknown as { adapter: RecordStore }).adapter;
  const grantStore = (provider.Grant as unknown as { adapter: RecordStore }).adapter;
  const refreshTokenReads = withOwnFind(refreshTokenStore, async (id) => {
    const ctx = engineContext.getStore();
    if (!refreshTokenStore.findWithGrant || ctx?.oidc?.params?.grant_type !== 'refresh_token') return refreshTokenStore.find(id);
    const { record, grant } = await refreshTokenStore.findWithGrant(id);
    if (record?.grantId && grant) readAlong.set(ctx, { id: record.grantId, payload: grant });
    return record;
  });
  const grantReads = withOwnFind(grantStore, async (id) => {
    const ctx = engineContext.getStore();
    const along = ctx && readAlong.get(ctx);
    if (!along || along.id !== id) return grantStore.find(id);
    readAlong.delete(ctx);
    return along.payload;
  });
  Object.defineProperty(provider.RefreshToken, 'adapter', { value: refreshTokenReads });
  Object.defineProperty(provider.Grant, 'adapter', { value: grantReads });
}

/** 15: the preuserinfo hooks' claims in the ID token and userinfo. */
function overrideClaimResults(provider: Provider): void {
  // 15. The engine releases only the claims its configuration maps to a
  //     granted scope; a hook's claims are released whatever the scope
  //     (docs/actions.md, "Token hooks"). accounts.ts hands them over under
  //     a symbol of the account's claims; they are merged into the released
  //     ones, after the filter. The ID token's own claims (nonce, at_hash,
  //     sid …) are added by the engine after this, and are reserved anyway.
  const Claims = provider.Claims as unknown as {
    prototype: { available: Record<string | symbol, unknown>; result(): Promise<Record<string, unknown>> };
  };
  const result = Claims.prototype.result;
  Claims.prototype.result = async function withHookClaims(this: { available: Record<string | symbol, unknown> }) {
    const claims = await result.call(this);
    const appended = this.available[HOOK_CLAIMS] as Record<string, unknown> | undefined;
    return appended ? { ...claims, ...appended } : claims;
  };
}

/** The store with another `find`; its other methods stay the store's own (bound: adapters keep private state). */
function withOwnFind(store: RecordStore, find: RecordStore['find']): RecordStore {
  const methods = Object.fromEntries(
    ADAPTER_METHODS.flatMap((name) => {
      const method = (store as unknown as Record<string, unknown>)[name];
      return typeof method === 'function' ? [[name, method.bind(store)]] : [];
    }),
  );
  return { ...methods, find } as RecordStore;
}

/**
 * The engine's save of a record writes through `record.adapter`: for this
 * one record, its write becomes `write`, and a write that did not happen
 * (false) is invalid_grant with `detail`, as the engine reports its own
 * replay and reuse checks.
 */
function writeOnlyIf(record: object, write: (id: string, payload: object, expiresIn?: number) => Promise<boolean>, detail: string): void {
  Object.defineProperty(record, 'adapter', {
    value: {
      async upsert(id: string, payload: object, expiresIn?: number) {
        if (!(await write(id, payload, expiresIn))) throw new errors.InvalidGrant(detail);
      },
    },
  });
}

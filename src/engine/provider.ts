import Provider, { errors } from 'oidc-provider';
import type { Logger } from '../logger.ts';
import { requestIdOf } from '../http/request-context.ts';
import { engineConfiguration, type EngineDependencies } from './configuration.ts';
import { digestsEqual, secretDigest } from '../security/secrets.ts';
import { applyJwtAccessTokens } from './jwt-access-tokens.ts';
import { bindTokensToMachineKeys } from './key-bound-tokens.ts';
import { endpointRules, tokenErrorNames } from './endpoint-rules.ts';
import { bearerChallenge, openidScopeRequired } from './authorization-rules.ts';
import { introspectionDetails } from './token-policies.ts';
import { registerGrants, tokenExchangeInDiscoveryWhileOn } from './grants/index.ts';
import { rulesByEndpoint, type EngineRule } from './rules-by-endpoint.ts';
import { RETRY_AFTER_SECONDS } from '../storage/outage.ts';
import { offlineAccessAsksConsent, recordBrowserAccounts, revokeAccessTokensAtLogout, switchToHintedSession } from './sign-in-policy.ts';

interface ClientSchema {
  dev_mode?: boolean;
  invalidate(message: string, code?: string): void;
}

// The engine refuses http and localhost redirect URIs for implicit web
// clients; SPEC 3.2 allows them to apps in dev mode, so those two checks
// (and only those) are waived when the app has devMode on.
const DEV_MODE_WAIVERS = new Set(['implicit-force-https', 'implicit-forbid-localhost']);

function applyClientRules(provider: Provider, secretKey: Buffer): void {
  const Client = provider.Client as unknown as {
    prototype: { clientSecret?: string; compareClientSecret(actual: string): boolean; responseTypeAllowed(type: string): boolean };
    Schema: { prototype: ClientSchema };
  };
  // SEED 7.1: a response type the app is not set up for is unauthorized_client
  // (the engine says invalid_request); it is still sent to the redirect_uri.
  const responseTypeAllowed = Client.prototype.responseTypeAllowed;
  Client.prototype.responseTypeAllowed = function responseTypeAllowedOrUnauthorized(type: string) {
    if (responseTypeAllowed.call(this, type)) return true;
    throw new errors.UnauthorizedClient('requested response_type is not allowed for this client');
  };
  // Client secrets are stored as keyed digests, never in clear: compare the
  // digest of what the client presents with the stored one, in constant time.
  Client.prototype.compareClientSecret = function compareClientSecret(actual: string) {
    if (!this.clientSecret || typeof actual !== 'string') return false;
    return digestsEqual(Buffer.from(this.clientSecret, 'base64url'), secretDigest(secretKey, actual));
  };
  const invalidate = Client.Schema.prototype.invalidate;
  Client.Schema.prototype.invalidate = function waiveForDevMode(this: ClientSchema, message: string, code?: string) {
    if (this.dev_mode && code && DEV_MODE_WAIVERS.has(code)) return;
    invalidate.call(this, message, code);
  };
}

/**
 * The engine builds clients from their metadata and caches them by a SHA-256
 * of the metadata's JSON, which it computes on every look-up: twice per token
 * or introspection request. Our ClientDirectory hands out the same metadata
 * object for as long as it caches an app, so the client built from it is
 * reused by object identity instead; a changed app is a new object.
 */
function reuseClientsOfSameMetadata(provider: Provider): void {
  type Find = (id: string) => Promise<unknown>;
  const Client = provider.Client as unknown as { find: Find; adapter: { find(id: string): Promise<object | undefined> } };
  const find: Find = Client.find.bind(Client);
  const built = new WeakMap<object, Promise<unknown>>();
  Client.find = async (id) => {
    const metadata = typeof id === 'string' && id ? await Client.adapter.find(id) : undefined;
    if (!metadata) return find(id);
    let client = built.get(metadata);
    if (!client) {
      client = find(id);
      built.set(metadata, client);
    }
    return client;
  };
}

/**
 * SEED 4.7 lets clients cache the key set; keys are published before they
 * sign, so a cache of max-age never misses a key in use.
 */
function jwksCacheControl(maxAge: number): EngineRule {
  const cacheControl = `public, max-age=${maxAge}`;
  return async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'jwks' && ctx.status === 200) ctx.set('Cache-Control', cacheControl);
  };
}

/**
 * A store outage is answered 503 (storage/outage.ts): RFC 9110 10.2.3 lets
 * the client know when to try again. Registered first, so it sees every
 * answer the engine's routes give.
 */
const retryAfterWhenUnavailable: EngineRule = async (ctx, next) => {
  await next();
  if (ctx.status === 503) ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
};

// One factory builds the whole engine, because rotating signing keys means
// building a new Provider (it snapshots its keys at construction) and
// everything attached to an instance must be attached again.
export function buildProvider(deps: EngineDependencies, log: Logger): Provider {
  const provider = new Provider(deps.config.issuer, engineConfiguration(deps));
  // The app pins X-Forwarded-Host/Proto to the ISSUER before every request
  // reaches the engine (src/app.ts), so they are always trustworthy here.
  provider.proxy = true;
  applyClientRules(provider, deps.secretKey);
  reuseClientsOfSameMetadata(provider);

  const jwtTokens = applyJwtAccessTokens(provider, deps.config.issuer, deps.jwks);
  bindTokensToMachineKeys(provider, deps.db);
  registerGrants(provider, deps);

  // Same attributes as the engine's own session cookie (cookies.long).
  const sessionCookie = { httpOnly: true, sameSite: 'lax', path: '/', maxAge: deps.config.sessionIdleLifetime * 1000 };
  const checkForm = endpointRules(jwtTokens);
  const recordAccounts = recordBrowserAccounts(sessionCookie);
  const switchSession = switchToHintedSession(sessionCookie);
  provider.use(retryAfterWhenUnavailable as never);
  provider.use(
    rulesByEndpoint({
      discovery: [tokenExchangeInDiscoveryWhileOn(deps)],
      jwks: [jwksCacheControl(deps.config.jwksMaxAge)],
      authorization: [openidScopeRequired, switchSession, offlineAccessAsksConsent, recordAccounts],
      token: [checkForm, tokenErrorNames],
      introspection: [checkForm, introspectionDetails(deps.lookupUser, deps.findAccount)],
      revocation: [checkForm],
      userinfo: [bearerChallenge],
      end_session: [switchSession, recordAccounts, revokeAccessTokensAtLogout],
    }) as never,
  );

  // A refreshed token's gty lists its history ("authorization_code refresh_token"): count the last step.
  const issued = (token: { gty?: string }) => deps.onTokenIssued?.(token.gty?.split(' ').pop() ?? 'unknown');
  provider.on('access_token.saved', issued);
  provider.on('client_credentials.saved', () => deps.onTokenIssued?.('client_credentials'));

  provider.on('server_error', (ctx, err) => {
    log.error({ err, requestId: requestIdOf(ctx.req), route: ctx.oidc?.route }, 'engine server_error');
  });
  return provider;
}

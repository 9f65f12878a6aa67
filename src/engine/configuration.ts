import { createHmac } from 'node:crypto';
import { cookieSigner } from '../security/cookie-signer.ts';
import type { Adapter, ClientAuthMethod, Configuration, FindAccount, KoaContextWithOIDC } from 'oidc-provider';
import type { JWK } from 'jose';
import type { ConfigResult } from '../../config/load.ts';
import { CLAIMS_BY_SCOPE, SCOPES } from './claims.ts';
import { PAGE_HEADERS } from '../pages/layout.ts';
import { errorPage } from '../pages/engine-pages.ts';
import { ACR_VALUES, acrFromClaimsParameter } from './acr.ts';
import { logoutSource, postLogoutSuccessSource } from './logout.ts';
import { EXTRA_CLIENT_METADATA } from '../domain/apps.ts';
import { interactionPolicyFor } from './interaction-policy.ts';
import { secondFactorAtTokenEndpoint, type ForcedMfa } from './second-factor-rule.ts';
import { loadFirstPartyGrant } from './first-party-grant.ts';
import { expiresWithSession } from './session-tokens.ts';
import { introspectionAllowed, revocationAllowed } from './token-policies.ts';
import type { UserLookup } from './accounts.ts';
import type { ImpersonationCheck } from './grants/token-exchange.ts';
import type { MachineKeyLookup } from '../storage/machine-key-cache.ts';
import type { FeatureName } from '../storage/features.ts';
import type { Database } from '../storage/database.ts';
import type { AuthThrottle } from '../security/auth-throttle.ts';
import { tokenExtraClaims, type ExchangeOutcomes } from './grants/exchange-outcomes.ts';
import { DEVICE_CODE_LIFETIME } from './device-flow.ts';
import type { DeliveryResult } from './backchannel-logout.ts';
import type { OutboundFetch } from '../outbound/client.ts';
import type { TokenHooks } from './token-hooks.ts';
import type { EngineRule } from './rule-dispatch.ts';
import { successSource, userCodeConfirmSource, userCodeInputSource } from '../pages/device.ts';

import { INTERACTION_PATH, ROUTES } from './routes.ts';
import { StoreUnavailable } from '../storage/outage.ts';
import { chooseLanguage } from '../pages/i18n.ts';
import { unavailablePage } from '../pages/messages.ts';
import { noteOAuthError } from './refusal-reasons.ts';

/** Languages of the login pages (interactions/i18n.ts). */
export const UI_LOCALES = ['en', 'de'];

export const CLIENT_AUTH_METHODS: ClientAuthMethod[] = ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'];
export const INTROSPECTION_AUTH_METHODS: ClientAuthMethod[] = ['client_secret_basic', 'private_key_jwt'];
/** Algorithms of DPoP proofs (RFC 9449 5.1): ES256, Ed25519 (also as EdDSA) and RS256. */
export const DPOP_SIGNING_ALGS = ['ES256', 'Ed25519', 'EdDSA', 'RS256'] as const;

/**
 * The key of the DPoP nonces the server hands out (RFC 9449 8): every node
 * derives the same one from the secret digest key, so a nonce from one node
 * is good on all of them.
 */
function dpopNonceSecret(secretKey: Buffer): Buffer {
  return createHmac('sha256', secretKey).update('dpop-nonce').digest();
}

export interface EngineDependencies {
  config: ConfigResult;
  db: Database;
  /** Private signing JWKs, current key first (see keys/signing-keys.ts). */
  jwks: JWK[];
  cookieKeys: Buffer[];
  /** Key of the keyed digests that stand in for client secrets. */
  secretKey: Buffer;
  adapter: (model: string) => Adapter;
  findAccount: FindAccount;
  /** Whether the login policy forces a second factor on a user (forceMfa). */
  forcedMfa: ForcedMfa;
  /** Instance feature flags (cached briefly, cleared on change). */
  featureEnabled: (name: FeatureName) => Promise<boolean>;
  /** Users as hot paths read them (cached briefly, cleared on change). */
  lookupUser: UserLookup;
  /** Token exchange: whether an actor may act for a subject (src/queries/principal.ts). */
  mayImpersonate: ImpersonationCheck;
  /** Machine users' registered keys (cached briefly, cleared on change). */
  machineKeys: MachineKeyLookup;
  exchanges: ExchangeOutcomes;
  /** Counts failed client authentication per client address. */
  throttle: AuthThrottle;
  /** Told the grant type of every access token issued (for /metrics). */
  onTokenIssued?: (grantType: string) => void;
  /** The outbound client as app-level callers get it (src/outbound/client.ts). */
  outboundFetch: OutboundFetch;
  /** Told how each back-channel logout delivery ended (for /metrics). */
  onBackchannelLogout?: (result: DeliveryResult) => void;
  /** The preaccesstoken hooks, called for every access token issued (preuserinfo is findAccount's). */
  tokenHooks?: TokenHooks;
  /** Run around a confirmed logout, innermost: the SAML IdP logs the session's SAML apps out (src/saml/end-session-fan-out.ts). */
  endSessionRules?: EngineRule[];
}

/**
 * SameSite of the engine's session cookie: Lax, unless POST is served at
 * authorization and end_session (ENABLE_HTTP_POST_METHODS), where a form
 * posted from an app's site must carry it: None (Secure, so an https issuer,
 * config/load.ts).
 */
export function sessionCookieSameSite(config: Pick<ConfigResult, 'enableHttpPostMethods'>): 'lax' | 'none' {
  return config.enableHttpPostMethods ? 'none' : 'lax';
}

function lifetimes(config: ConfigResult): NonNullable<Configuration['ttl']> {
  return {
    AccessToken: config.accessTokenLifetime,
    ClientCredentials: config.accessTokenLifetime,
    IdToken: config.idTokenLifetime,
    AuthorizationCode: config.authorizationCodeLifetime,
    Interaction: config.interactionLifetime,
    Session: config.sessionIdleLifetime,
    Grant: config.refreshTokenAbsoluteLifetime,
    DeviceCode: DEVICE_CODE_LIFETIME,
    // Idle lifetime, capped by what is left of the absolute lifetime
    // counted from the first token of the rotation chain.
    RefreshToken: (_ctx, token) => Math.max(1, Math.min(config.refreshTokenIdleLifetime, config.refreshTokenAbsoluteLifetime - token.totalLifetime())),
  };
}

/** CORS for browser apps: only the origins of the client's own redirect URIs. */
function clientBasedCORS(_ctx: KoaContextWithOIDC, origin: string, client: { redirectUris?: string[] }): boolean {
  if (origin === 'null') return false;
  return (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin);
}

export function engineConfiguration(deps: EngineDependencies): Configuration {
  const { config } = deps;
  return {
    adapter: deps.adapter as unknown as Configuration['adapter'],
    findAccount: secondFactorAtTokenEndpoint(deps.findAccount, deps.forcedMfa),
    jwks: { keys: deps.jwks as never },
    cookies: {
      // Keygrip's signatures with KeyObject keys (src/security/cookie-signer.ts).
      keys: cookieSigner(deps.cookieKeys.map((key) => key.toString('base64url'))) as never,
      long: { httpOnly: true, sameSite: sessionCookieSameSite(config) },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    routes: ROUTES,
    // OIDC Core 3.1.2.1 (GET and POST at the authorization endpoint), RP-Initiated Logout 1.0 2.
    enableHttpPostMethods: config.enableHttpPostMethods,
    acrValues: [...ACR_VALUES],
    responseTypes: ['code', 'id_token', 'id_token token'],
    scopes: SCOPES,
    claims: CLAIMS_BY_SCOPE,
    subjectTypes: ['public'],
    clientAuthMethods: CLIENT_AUTH_METHODS,
    // OIDC Core 3.1.2.1: redirect_uri is required, even with a single registered one.
    allowOmittingSingleRegisteredRedirectUri: false,
    clientBasedCORS: clientBasedCORS as Configuration['clientBasedCORS'],
    // The engine's outgoing requests (back-channel logout; our apps use no
    // jwks_uri or sector_identifier_uri) are an app's calls: every app belongs
    // to an org, so loopback and private addresses only with
    // OUTBOUND_ALLOW_PRIVATE. The client replaces the dispatcher the engine
    // sets (lib/helpers/fetch_request.js) with its own checked one.
    fetch: deps.outboundFetch as Configuration['fetch'],
    extraClientMetadata: { properties: [...EXTRA_CLIENT_METADATA] },
    enabledJWA: {
      idTokenSigningAlgValues: ['RS256'],
      userinfoSigningAlgValues: ['RS256'],
      clientAuthSigningAlgValues: ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'],
      dPoPSigningAlgValues: [...DPOP_SIGNING_ALGS],
    },
    ttl: lifetimes(config),
    interactions: {
      url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}`,
      policy: interactionPolicyFor(deps.forcedMfa),
    },
    loadExistingGrant: loadFirstPartyGrant as Configuration['loadExistingGrant'],
    expiresWithSession: expiresWithSession as unknown as Configuration['expiresWithSession'],
    extraTokenClaims: tokenExtraClaims(deps.exchanges, deps.tokenHooks) as Configuration['extraTokenClaims'],
    // Refresh tokens rotate on every use (docs/oidc.md; the engine's default
    // rotates only public clients'); reuse of an old one revokes the grant.
    rotateRefreshToken: true,
    // ID token claims are decided per app in findAccount (OIDC Core 5.4).
    conformIdTokenClaims: false,
    features: {
      devInteractions: { enabled: false },
      // RFC 9126; an app may require it (require_pushed_authorization_requests).
      pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: false, allowUnregisteredRedirectUris: false },
      // RFC 9449: proofs are optional unless the app has dpop_bound_access_tokens;
      // a proof whose iat is off by more than a minute is answered with a
      // nonce to use instead (use_dpop_nonce). Seen proofs are kept in the
      // ReplayDetection store, shared by all nodes.
      dPoP: { enabled: true, nonceSecret: dpopNonceSecret(deps.secretKey), requireNonce: () => false, allowReplay: false },
      resourceIndicators: { enabled: false },
      registration: { enabled: false },
      // OIDC Core 5.5: claims asked for by name, for the ID token or userinfo.
      claimsParameter: { enabled: true, assertClaimsParameter: acrFromClaimsParameter as never },
      userinfo: { enabled: true },
      // The engine lets any client introspect any token by default; a token is
      // active only for a client in its audience (RFC 7662 2.2, docs/oidc.md).
      introspection: { enabled: true, allowedPolicy: introspectionAllowed as never },
      revocation: { enabled: true, allowedPolicy: revocationAllowed as never },
      // Machine users with a client secret (docs/api/users.md); client-request-rules.ts
      // admits only client_secret_basic and client_secret_post for it.
      clientCredentials: { enabled: true },
      // RFC 8628: codes like BCDF-GHJK (20 consonants: no words, no look-alikes),
      // typed in any case, with or without the dash, on our pages.
      deviceFlow: {
        enabled: true,
        charset: 'base-20',
        mask: '****-****',
        userCodeInputSource: userCodeInputSource as never,
        userCodeConfirmSource: userCodeConfirmSource as never,
        successSource: successSource as never,
      },
      // OIDC Back-Channel Logout 1.0, for apps with a backchannel_logout_uri;
      // deliveries run in the background (engine-overrides.ts).
      backchannelLogout: { enabled: true },
      // RP-Initiated Logout 1.0: a confirmation page unless the app proved
      // itself with an id_token_hint (src/engine/logout.ts).
      rpInitiatedLogout: { enabled: true, logoutSource: logoutSource as never, postLogoutSuccessSource: postLogoutSuccessSource as never },
    },
    discovery: {
      introspection_endpoint_auth_methods_supported: INTROSPECTION_AUTH_METHODS,
      revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
      prompt_values_supported: ['none', 'login', 'select_account', 'create'],
      ui_locales_supported: UI_LOCALES,
    },
    renderError: async (ctx, out, err) => {
      noteOAuthError(ctx, out);
      ctx.set(PAGE_HEADERS);
      ctx.type = 'html';
      // A store outage gets the login pages' own 503 page, in the user's language.
      ctx.body =
        err instanceof StoreUnavailable
          ? unavailablePage(chooseLanguage(ctx.query.ui_locales, ctx.get('accept-language')))
          : errorPage(String(out.error), out.error_description ? String(out.error_description) : undefined);
    },
  };
}

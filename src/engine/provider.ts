import Provider from 'oidc-provider';
import type { Logger } from '../logger.ts';
import { requestIdOf } from '../request-context.ts';
import { engineConfiguration, sessionCookieSameSite, type EngineDependencies } from './configuration.ts';
import { jwtAccessTokens } from './jwt-access-tokens.ts';
import { overrideEngine } from './engine-overrides.ts';
import { clientRequestRules, renameDpopReplay, tokenErrorNames } from './client-request-rules.ts';
import { bearerChallenge, offlineAccessAsksConsent, openidScopeRequired } from './authorization-rules.ts';
import { introspectionDetails } from './token-policies.ts';
import { registerGrants, tokenExchangeInDiscoveryWhileOn } from './grants/index.ts';
import { rulesByEndpoint, type EngineRule } from './rule-dispatch.ts';
import { logoutDeliveries } from './backchannel-logout.ts';
import { sessionIndex } from '../storage/user-sessions.ts';
import { DEVICE_POLL_MODEL, deviceGrantNotAllowed, devicePollInterval, freshUserCodeForm, pacedDevicePolling, throttleUserCodes } from './device-flow.ts';
import { hardenEnginePages } from './page-hardening.ts';
import { refuseNulParameters } from './request-form.ts';
import { forgetSignedOutAccount, rememberSignedInAccount } from './browser-accounts.ts';
import { switchToHintedSession } from './hinted-session.ts';
import { revokeAccessTokensAtLogout } from './session-tokens.ts';
import { throttleClientAuthentication } from './throttle-rule.ts';
import { RETRY_AFTER_SECONDS } from '../storage/outage.ts';
import { spaceSeparated } from '../domain/space-separated.ts';
import { noteOAuthRefusals } from './refusal-reasons.ts';

/**
 * Clients cache the key set (OIDC Core 10.1.1); keys are published before they
 * sign, so a cache of max-age never misses a key in use.
 */
function jwksCacheControl(maxAge: number): EngineRule {
  const cacheControl = `public, max-age=${maxAge}`;
  return async (ctx, next) => {
    await next();
    if (ctx.status === 200) ctx.set('Cache-Control', cacheControl);
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
  const jwtTokens = jwtAccessTokens(deps.config.issuer, deps.jwks);
  overrideEngine(provider, {
    secretKey: deps.secretKey,
    jwt: jwtTokens,
    machineKeys: deps.machineKeys,
    logouts: logoutDeliveries(log, deps.onBackchannelLogout),
  });
  registerGrants(provider, deps);

  // Same attributes as the engine's own session cookie (cookies.long).
  const sessionCookie = { httpOnly: true, sameSite: sessionCookieSameSite(deps.config), path: '/', maxAge: deps.config.sessionIdleLifetime * 1000 };
  const clientRequests = clientRequestRules(jwtTokens);
  const rememberAccount = rememberSignedInAccount(sessionCookie);
  const switchSession = switchToHintedSession(sessionCookie);
  provider.use(noteOAuthRefusals as never);
  provider.use(retryAfterWhenUnavailable as never);
  provider.use(refuseNulParameters as never);
  const throttled = throttleClientAuthentication(deps.throttle);
  provider.use(
    rulesByEndpoint({
      discovery: [tokenExchangeInDiscoveryWhileOn(deps)],
      jwks: [jwksCacheControl(deps.config.jwksMaxAge)],
      authorization: [hardenEnginePages, openidScopeRequired, switchSession, offlineAccessAsksConsent, rememberAccount],
      resume: [hardenEnginePages, rememberAccount],
      token: [throttled, clientRequests.token, tokenErrorNames, pacedDevicePolling(deps.adapter(DEVICE_POLL_MODEL))],
      introspection: [throttled, clientRequests.introspection, introspectionDetails(deps.lookupUser, deps.findAccount)],
      revocation: [throttled, clientRequests.revocation],
      pushed_authorization_request: [throttled, clientRequests.pushedAuthorization],
      device_authorization: [throttled, clientRequests.deviceAuthorization, deviceGrantNotAllowed, devicePollInterval],
      code_verification: [hardenEnginePages, throttleUserCodes(deps.throttle), freshUserCodeForm],
      device_resume: [hardenEnginePages],
      userinfo: [bearerChallenge],
      end_session: [hardenEnginePages, switchSession],
      end_session_confirm: [hardenEnginePages, forgetSignedOutAccount(sessionCookie), revokeAccessTokensAtLogout, ...(deps.endSessionRules ?? [])],
      end_session_success: [hardenEnginePages],
    }) as never,
  );

  // A refreshed token's gty lists its history ("authorization_code refresh_token"): count the last step.
  const issued = (token: { gty?: string }) => deps.onTokenIssued?.(spaceSeparated(token.gty).pop() ?? 'unknown');
  provider.on('access_token.saved', issued);
  provider.on('client_credentials.saved', () => deps.onTokenIssued?.('client_credentials'));

  provider.on('grant.error', renameDpopReplay as never);

  // Every signed-in session by its user, so all of a user's sessions can be
  // ended at once (commands/end-user-sessions.ts).
  const sessions = sessionIndex(deps.db, (err) => log.warn({ err }, 'could not update the sessions of a user'));
  provider.on('session.saved', (session: { jti: string; accountId?: string; exp?: number; oldId?: string }) => {
    if (!session.accountId || !session.exp) return;
    sessions.saved({ accountId: session.accountId, sessionId: session.jti, expiresAt: new Date(session.exp * 1000), replacedId: session.oldId });
  });
  provider.on('session.destroyed', (session: { jti: string }) => sessions.destroyed(session.jti));

  provider.on('server_error', (ctx, err) => {
    log.error({ err, requestId: requestIdOf(ctx.req), route: ctx.oidc?.route }, 'engine server_error');
  });
  return provider;
}

import querystring from 'node:querystring';
import type Provider from 'oidc-provider';
import type { Grant, KoaContextWithOIDC } from 'oidc-provider';
import { decodeJwt } from 'jose';
import { forgetAccount, liveBrowserAccounts, readBrowserAccounts, rememberAccount, writeBrowserAccounts } from './browser-accounts.ts';
import type { EngineRule } from './rule-dispatch.ts';
import { addGrantableScopes } from './api-scope.ts';
import { StoreUnavailable } from '../storage/outage.ts';
import { formBody, isFormPost, requestParams } from './request-form.ts';

/**
 * First-party apps need no consent screen (docs/oidc.md): the grant of the
 * browser session for this app is created, or extended, with the requested
 * scopes the app may have and the requested claims, so the engine's consent
 * prompt has nothing to ask.
 */
export async function loadFirstPartyGrant(ctx: KoaContextWithOIDC) {
  const { oidc } = ctx;
  const accountId = oidc.session?.accountId;
  const client = oidc.client;
  if (!accountId || !client) return undefined;
  const provider = oidc.provider as Provider;
  const grantId = oidc.result?.consent?.grantId ?? oidc.session?.grantIdFor(client.clientId);
  const existing = grantId ? await provider.Grant.find(grantId) : undefined;
  const reused = existing && existing.accountId === accountId && existing.clientId === client.clientId ? existing : undefined;
  const grant = reused ?? new provider.Grant({ accountId, clientId: client.clientId });
  await saveGrantChange(grant, Boolean(reused), () => {
    addGrantableScopes(grant, client, oidc.requestParamOIDCScopes ?? []);
    const claims = [...(oidc.requestParamClaims ?? [])];
    if (claims.length) grant.addOIDCClaims(claims);
  });
  return grant;
}

/**
 * Applies `change` to a first-party grant and saves it, unless it is a
 * stored grant that `change` left as it was: saving that again would write
 * the same payload with the same expiry (a sign-in with a consent step
 * passes here three times). Answers the grant's id.
 */
export async function saveGrantChange(grant: Grant, stored: boolean, change: () => void): Promise<string> {
  const before = stored ? grantedOf(grant) : undefined;
  change();
  if (stored && grantedOf(grant) === before) return grant.jti;
  return grant.save();
}

/** What a grant holds that the sign-in adds to. */
function grantedOf(grant: Grant): string {
  return JSON.stringify([grant.openid, grant.resources, grant.rejected]);
}

/**
 * Access tokens issued in a browser session end with it (docs/oidc.md). Codes
 * and refresh tokens of `offline_access` outlive it, as OIDC Core intends;
 * their access tokens are revoked at logout by `revokeAccessTokensAtLogout`.
 */
export async function expiresWithSession(_ctx: KoaContextWithOIDC, token: { kind?: string; scopes: Set<string> }): Promise<boolean> {
  return token.kind === 'AccessToken' || !token.scopes.has('offline_access');
}

/**
 * The engine drops `offline_access` unless the request has prompt=consent
 * (OIDC Core 11). We issue a refresh token whenever it is requested
 * (docs/oidc.md), so consent is asked for on the caller's behalf; the login
 * UI grants it without a page (first-party). prompt=none is left alone.
 */
export const offlineAccessAsksConsent: EngineRule = async (ctx, next) => {
  if (ctx.method === 'GET') {
    const prompt = promptAskingConsent(ctx.query);
    if (prompt) ctx.query = { ...ctx.query, prompt };
  } else if (isFormPost(ctx)) {
    // POST at authorization (ENABLE_HTTP_POST_METHODS): the engine reads the form as changed here.
    const params = querystring.parse(await formBody(ctx));
    const prompt = promptAskingConsent(params);
    if (prompt) (ctx.req as { body?: string }).body = querystring.stringify({ ...params, prompt });
  }
  await next();
};

/** The prompt with consent added, when offline_access is asked for without it (and not with prompt=none). */
export function promptAskingConsent(params: querystring.ParsedUrlQuery): string | undefined {
  const scope = typeof params.scope === 'string' ? params.scope.split(' ') : [];
  const prompt = typeof params.prompt === 'string' ? params.prompt.split(' ').filter(Boolean) : [];
  return scope.includes('offline_access') && !prompt.includes('none') && !prompt.includes('consent') ? [...prompt, 'consent'].join(' ') : undefined;
}

/**
 * A hint names a user (id_token_hint at authorize and end_session): when the
 * browser holds that user's session but another one is in use, switch to it
 * and ask again, so the engine acts on the hinted user's session (docs/oidc.md).
 * Only a hint that verifies switches: our signature, our issuer, issued to
 * the app of the request (an expired one is fine, OIDC Core 3.1.2.1); any
 * other leaves the browser as it is, and the engine answers it
 * `invalid_request` (to the redirect_uri at authorize).
 */
export function switchToHintedSession(cookieOptions: Record<string, unknown>): EngineRule {
  return async (ctx, next) => {
    const params = await requestParams(ctx);
    const hint = params.id_token_hint;
    const provider = ctx.app as unknown as Provider;
    const sub = typeof hint === 'string' && hint.length < 8192 ? await verifiedHintSubject(provider, hint, params.client_id) : undefined;
    if (sub) {
      const live = await liveBrowserAccounts(provider, readBrowserAccounts(ctx.cookies));
      const target = live.find((a) => a.accountId === sub);
      const current = ctx.cookies.get(provider.cookieName('session'));
      if (target && target.sessionId !== current) {
        ctx.cookies.set(provider.cookieName('session'), target.sessionId, cookieOptions);
        // 307 has the browser send a POSTed form again (RFC 9110 15.4.8); a GET is asked again as it was.
        ctx.status = ctx.method === 'POST' ? 307 : 303;
        ctx.redirect(ctx.originalUrl);
        return;
      }
    }
    await next();
  };
}

/**
 * The user an ID token hint names, once the engine's own check of a hint
 * passes (IdToken.validate: signature by our keys, issuer, audience the
 * client), for the client of the request, else (end_session without
 * client_id) the hint's audience, as the engine picks it.
 */
async function verifiedHintSubject(provider: Provider, hint: string, clientIdParam: unknown): Promise<string | undefined> {
  try {
    const clientId = typeof clientIdParam === 'string' ? clientIdParam : decodeJwt(hint).aud;
    if (typeof clientId !== 'string') return undefined;
    const client = await provider.Client.find(clientId);
    if (!client) return undefined;
    const { payload } = (await provider.IdToken.validate(hint, client)) as { payload: { sub?: unknown } };
    return typeof payload.sub === 'string' ? payload.sub : undefined;
  } catch (err) {
    if (err instanceof StoreUnavailable) throw err;
    return undefined;
  }
}

type BrowserSession = { accountId?: string; uid: string; destroyed?: boolean } | undefined;

/** Keeps the browser's list of signed-in users current: a user who signed in (authorization, resume) joins it. */
export function rememberSignedInAccount(cookieOptions: Record<string, unknown>): EngineRule {
  return async (ctx, next) => {
    await next();
    const session = ctx.oidc?.session as unknown as BrowserSession;
    if (!session?.accountId || session.destroyed) return;
    const accounts = readBrowserAccounts(ctx.cookies);
    if (accounts[0]?.accountId !== session.accountId || accounts[0]?.sessionUid !== session.uid) {
      writeBrowserAccounts(ctx.cookies, rememberAccount(accounts, { accountId: session.accountId, sessionUid: session.uid }), cookieOptions);
    }
  };
}

/** A user who signed out (the logout confirmation) leaves the browser's list of signed-in users. */
export function forgetSignedOutAccount(cookieOptions: Record<string, unknown>): EngineRule {
  return async (ctx, next) => {
    await next();
    const session = ctx.oidc?.session as unknown as BrowserSession;
    if (session?.destroyed && session.accountId)
      writeBrowserAccounts(ctx.cookies, forgetAccount(readBrowserAccounts(ctx.cookies), session.accountId), cookieOptions);
  };
}

/**
 * At logout the engine revokes the grants that end with the session; grants
 * with offline_access survive (their refresh tokens are meant to), but the
 * access tokens issued in the session must not (docs/oidc.md): revoke those.
 */
export const revokeAccessTokensAtLogout: EngineRule = async (ctx, next) => {
  await next();
  if (!ctx.oidc) return;
  const session = ctx.oidc.session as unknown as { destroyed?: boolean; authorizations?: Record<string, { grantId?: string }> } | undefined;
  if (!session?.destroyed || !session.authorizations) return;
  const provider = ctx.oidc.provider as Provider;
  const adapter = (provider.AccessToken as unknown as { adapter: { revokeByGrantId(id: string): Promise<void> } }).adapter;
  await Promise.all(
    Object.values(session.authorizations)
      .map((authorization) => authorization.grantId)
      .filter((grantId): grantId is string => Boolean(grantId))
      .map((grantId) => adapter.revokeByGrantId(grantId)),
  );
};

import querystring from 'node:querystring';
import type Provider from 'oidc-provider';
import type { EngineRule } from './rule-dispatch.ts';
import { formBody, isFormPost, requestParams } from './request-form.ts';
import { spaceSeparated } from '../domain/space-separated.ts';

// The rules of an authorization request's parameters, written once: the
// authorization endpoint (GET, and POST with ENABLE_HTTP_POST_METHODS)
// applies them here, pushed requests in client-request-rules.ts.

/**
 * Every authorization request is OpenID Connect (docs/oidc.md), so a scope
 * without `openid` is `invalid_scope`, sent to the redirect_uri with the
 * state (the engine would treat a code request as plain OAuth 2.0). Only when
 * the client and its redirect_uri check out; otherwise the engine answers
 * with its own error page.
 */
export const openidScopeRequired: EngineRule = async (ctx, next) => {
  const params = await requestParams(ctx);
  const { client_id: clientId, redirect_uri: redirectUri, state, response_type: responseType, response_mode: responseMode } = params;
  if (!lacksOpenidScope(params)) return next();
  if (typeof clientId !== 'string' || typeof redirectUri !== 'string' || typeof responseType !== 'string') return next();
  const provider = ctx.app as unknown as Provider;
  const client = (await provider.Client.find(clientId).catch(() => undefined)) as unknown as { redirectUriAllowed(uri: string): boolean } | undefined;
  if (!client?.redirectUriAllowed(redirectUri)) return next();
  const answer = new URLSearchParams({ error: 'invalid_scope', error_description: 'openid scope must be requested', iss: provider.issuer });
  if (typeof state === 'string') answer.set('state', state);
  const fragment = responseMode === 'fragment' || (responseMode !== 'query' && responseType !== 'code');
  const target = new URL(redirectUri);
  if (fragment) target.hash = answer.toString();
  else for (const [key, value] of answer) target.searchParams.set(key, value);
  ctx.status = 303;
  ctx.redirect(target.href);
};

/**
 * Userinfo without a token answers 401 (docs/oidc.md, Errors) with
 * `WWW-Authenticate: Bearer error="invalid_token"` as for a bad token (RFC
 * 6750 3.1 would leave the error out when no token was sent).
 */
export const bearerChallenge: EngineRule = async (ctx, next) => {
  await next();
  if (ctx.status !== 401) return;
  const challenge = ctx.response.get('WWW-Authenticate');
  if (challenge && !challenge.includes('error='))
    ctx.set('WWW-Authenticate', `${challenge}, error="invalid_token", error_description="no access token provided"`);
};

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
  const prompt = spaceSeparated(params.prompt);
  const asked = spaceSeparated(params.scope).includes('offline_access') && !prompt.includes('none') && !prompt.includes('consent');
  return asked ? [...prompt, 'consent'].join(' ') : undefined;
}

/** A request that names a scope without `openid`: not OpenID Connect, which every authorization request here is (docs/oidc.md). */
export function lacksOpenidScope(params: querystring.ParsedUrlQuery): boolean {
  return typeof params.scope === 'string' && !spaceSeparated(params.scope).includes('openid');
}

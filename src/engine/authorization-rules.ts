import type Provider from 'oidc-provider';
import type { EngineRule } from './rule-dispatch.ts';

/**
 * Every authorization request is OpenID Connect (docs/oidc.md), so a scope
 * without `openid` is `invalid_scope`, sent to the redirect_uri with the
 * state (the engine would treat a code request as plain OAuth 2.0). Only when
 * the client and its redirect_uri check out; otherwise the engine answers
 * with its own error page.
 */
export const openidScopeRequired: EngineRule = async (ctx, next) => {
  if (ctx.method !== 'GET') return next();
  const { client_id: clientId, redirect_uri: redirectUri, scope, state, response_type: responseType, response_mode: responseMode } = ctx.query;
  if (typeof scope !== 'string' || scope.split(' ').includes('openid')) return next();
  if (typeof clientId !== 'string' || typeof redirectUri !== 'string' || typeof responseType !== 'string') return next();
  const provider = ctx.app as unknown as Provider;
  const client = (await provider.Client.find(clientId).catch(() => undefined)) as unknown as { redirectUriAllowed(uri: string): boolean } | undefined;
  if (!client?.redirectUriAllowed(redirectUri)) return next();
  const params = new URLSearchParams({ error: 'invalid_scope', error_description: 'openid scope must be requested', iss: provider.issuer });
  if (typeof state === 'string') params.set('state', state);
  const fragment = responseMode === 'fragment' || (responseMode !== 'query' && responseType !== 'code');
  const target = new URL(redirectUri);
  if (fragment) target.hash = params.toString();
  else for (const [key, value] of params) target.searchParams.set(key, value);
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

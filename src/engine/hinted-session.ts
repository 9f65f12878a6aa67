import type Provider from 'oidc-provider';
import { decodeJwt } from 'jose';
import { liveBrowserAccounts, readBrowserAccounts } from './browser-accounts.ts';
import type { EngineRule } from './rule-dispatch.ts';
import { StoreUnavailable } from '../storage/outage.ts';
import { requestParams } from './request-form.ts';

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

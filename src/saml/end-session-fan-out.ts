import type { EngineRule } from '../engine/rule-dispatch.ts';
import { CATALOGUES, chooseLanguage } from '../pages/i18n.ts';
import { postFormPage } from '../pages/saml.ts';
import { continueChain, participantsOf, type EndedSession, type LogoutChainDeps } from './logout-chain.ts';

/**
 * Single logout started by the IdP (SAML 2.0 Profiles 4.4.3): when an OIDC
 * logout (end_session, confirmed) has ended the browser session, the SAML
 * apps it signed into are logged out in turn, through the browser, before
 * it goes on to where the engine was sending it (the app's
 * post_logout_redirect_uri, or the logged-out page).
 */
export function fanOutAtEndSession(deps: LogoutChainDeps): EngineRule {
  return async (ctx, next) => {
    await next();
    const session = ctx.oidc?.session as unknown as (EndedSession & { destroyed?: boolean }) | undefined;
    if (!session?.destroyed || ctx.status !== 303) return;
    const remaining = await participantsOf(deps, session);
    if (!remaining.length) return;
    const answer = await continueChain(deps, { finish: ctx.response.get('Location'), remaining, partial: false });
    if ('redirect' in answer) return ctx.redirect(answer.redirect);
    if ('post' in answer) {
      const lang = chooseLanguage(undefined, ctx.get('accept-language'));
      ctx.status = 200;
      ctx.type = 'html';
      ctx.body = postFormPage(lang, CATALOGUES[lang]!, answer.post);
    }
  };
}

import type { KoaContextWithOIDC } from 'oidc-provider';
import { CATALOGUES, chooseLanguage } from '../pages/i18n.ts';
import { type LogoutTexts, loggedOutPage, logoutConfirmationPage, logoutPage } from '../pages/engine-pages.ts';

// The pages of end_session (RP-Initiated Logout 1.0). The engine has checked
// an id_token_hint before it calls these (signature, issuer, audience: a
// hint that fails is an error page, never a logout).

function textsOf(ctx: KoaContextWithOIDC): LogoutTexts {
  const uiLocales = ctx.oidc.params?.ui_locales;
  const lang = chooseLanguage(uiLocales, ctx.get('accept-language'));
  return { lang, ...CATALOGUES[lang]! };
}

/**
 * The app proved itself with a valid id_token_hint of the signed-in user:
 * the logout goes straight on (RP-Initiated Logout 1.0 2). Without one, or
 * with the hint of another user, anybody's link could have sent the browser
 * here, so the user confirms (6).
 */
function requestedByTheUsersApp(ctx: KoaContextWithOIDC): boolean {
  if (!ctx.oidc.params?.id_token_hint) return false;
  const hint = ctx.oidc.entities.IdTokenHint as unknown as { payload?: { sub?: unknown } } | undefined;
  const accountId = ctx.oidc.session?.accountId;
  return Boolean(accountId) && hint?.payload?.sub === accountId;
}

export async function logoutSource(ctx: KoaContextWithOIDC, form: string): Promise<void> {
  const texts = textsOf(ctx);
  ctx.type = 'html';
  ctx.body = requestedByTheUsersApp(ctx) ? logoutPage(form, texts) : logoutConfirmationPage(form, texts);
}

export async function postLogoutSuccessSource(ctx: KoaContextWithOIDC): Promise<void> {
  ctx.type = 'html';
  ctx.body = loggedOutPage(textsOf(ctx));
}

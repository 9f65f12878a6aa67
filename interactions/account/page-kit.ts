import type { Context } from 'koa';
import { findUser } from '../../src/storage/users.ts';
import { loginName } from '../../src/domain/users.ts';
import { INTERACTION_PATH } from '../../src/engine/routes.ts';
import { CATALOGUES, chooseLanguage } from '../../src/pages/i18n.ts';
import { messagePage } from '../../src/pages/messages.ts';
import { form, render, text } from '../context.ts';
import type { FactorEnv } from '../factors/index.ts';
import type { SecurityContext } from '../views/parts.ts';
import { type FreshSignIn, freshSignIn, type SecurityState } from './fresh-sign-in.ts';

export const SECURITY_PATH = `${INTERACTION_PATH}/security`;

/** What the security page's routes share: its cookie, its page context, the CSRF check. */
export interface SecurityPageKit {
  env: FactorEnv;
  cookie: FreshSignIn;
  context(ctx: Context, state: SecurityState): SecurityContext;
  /** The state of a POST with a valid CSRF token, or undefined after rendering the "form expired" page. */
  posted(ctx: Context): SecurityState | undefined;
  nameOf(userId: string): Promise<string>;
  backHome(ctx: Context): void;
}

/** `cookieKey` signs the page's own short session cookie. */
export function securityPageKit(env: FactorEnv, cookieKey: Buffer): SecurityPageKit {
  const cookie = freshSignIn(cookieKey, SECURITY_PATH, env.issuer.startsWith('https:'));

  function context(ctx: Context, state: SecurityState): SecurityContext {
    const lang = chooseLanguage(undefined, ctx.get('accept-language'));
    return { lang, t: CATALOGUES[lang]!, action: SECURITY_PATH, csrf: cookie.csrfOf(state) };
  }

  function posted(ctx: Context): SecurityState | undefined {
    const state = cookie.read(ctx);
    if (state && cookie.csrfValid(state, text(form(ctx).csrf, 200))) return state;
    const c = context(ctx, state ?? cookie.fresh());
    render(ctx, messagePage(c.lang, c.t, c.t.formExpired), 403);
    return undefined;
  }

  async function nameOf(userId: string): Promise<string> {
    const user = await findUser(env.db, userId);
    return user ? loginName(user.user_name, user.primary_domain) : '';
  }

  function backHome(ctx: Context): void {
    ctx.status = 303;
    ctx.redirect(SECURITY_PATH);
  }

  return { env, cookie, context, posted, nameOf, backHome };
}

import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AuthThrottle } from '../../src/security/auth-throttle.ts';
import { changeOwnPassword, type PasswordChangeDeps } from '../../src/commands/change-own-password.ts';
import { passwordPolicyText } from '../../src/pages/password-rules.ts';
import { form, render, text, throttled } from '../context.ts';
import { securitySignInPage } from './pages.ts';
import type { ShowHome } from './manage-factors.ts';
import type { SecurityPageKit } from './page-kit.ts';

export interface ChangePasswordDeps extends Omit<PasswordChangeDeps, 'db' | 'announce'> {
  throttle?: AuthThrottle;
}

/**
 * `POST /ui/login/security/password` (docs/security.md, "Changing the
 * password"): the signed-in user's current password and the new one twice.
 * A wrong current password counts as a failed sign-in (lockout and address
 * throttle); a user locked by it is signed out of the page.
 */
export function changePasswordRoutes(router: Router, kit: SecurityPageKit, showHome: ShowHome, deps: ChangePasswordDeps): void {
  const { env, cookie, context, posted, backHome } = kit;
  const sessionCookie = deps.engine.provider.cookieName('session');

  router.post('/security/password', async (ctx: Context) => {
    const state = posted(ctx);
    if (!state) return;
    if (!state.user) return backHome(ctx);
    const c = context(ctx, state);
    if (throttled(ctx, c, deps.throttle)) return;
    const body = form(ctx);
    const current = text(body.currentPassword);
    const next = text(body.newPassword);
    if (!current) return showHome(ctx, state, undefined, { current: c.t.fieldRequired });
    if (!next) return showHome(ctx, state, undefined, { next: c.t.fieldRequired });
    if (next !== text(body.newPasswordRepeat)) return showHome(ctx, state, undefined, { repeat: c.t.passwordsDiffer });
    const outcome = await changeOwnPassword({ ...deps, db: env.db, announce: env.announce }, state.user, {
      current,
      next,
      keepSession: ctx.cookies.get(sessionCookie) || undefined,
    });
    if (outcome.result === 'wrong' || outcome.result === 'locked') await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
    if (outcome.result === 'wrong') return showHome(ctx, state, undefined, { current: c.t.passwordCurrentWrong });
    if (outcome.result === 'locked') {
      const fresh = cookie.fresh();
      cookie.write(ctx, fresh);
      return render(ctx, securitySignInPage(context(ctx, fresh), { error: c.t.accountLocked }), 403);
    }
    if (outcome.result === 'policy') return showHome(ctx, state, undefined, { next: passwordPolicyText(c.t, next, outcome.policy) });
    await showHome(ctx, state, undefined, { changed: true });
  });
}

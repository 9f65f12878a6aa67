import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AuthThrottle } from '../../src/security/auth-throttle.ts';
import { passwordLogin } from '../../src/commands/password-login.ts';
import { messagePage } from '../../src/pages/messages.ts';
import { form, render, text, throttled } from '../context.ts';
import { type FactorEnv, heldFactors, SECOND_FACTORS, type SecondFactor } from '../factors/index.ts';
import { secondFactorPage } from '../steps/second-factor.ts';
import { securitySignInPage } from './pages.ts';
import type { SecurityState } from './fresh-sign-in.ts';
import { manageFactorRoutes } from './manage-factors.ts';
import { codeFactorRoutes } from './code-factors.ts';
import { type ChangePasswordDeps, changePasswordRoutes } from './change-password.ts';
import { SECURITY_PATH, securityPageKit } from './page-kit.ts';

/** Where each factor's answer to the page's own sign-in is posted, under the page's path. */
const VERIFY_PATHS: Record<SecondFactor['id'], string> = { otp: 'code', passkey: 'passkey-factor', otpEmail: 'otp-email', otpSms: 'otp-sms' };

export interface SecurityDeps extends ChangePasswordDeps {
  env: FactorEnv;
  /** Signs the security page's own short session cookie. */
  cookieKey: Buffer;
  throttle?: AuthThrottle;
}

/**
 * `/ui/login/security` (docs/security.md, Second factors): a user manages
 * their own factors behind a fresh sign-in of their own (password, then a
 * second factor when they have one), separate from any app's session, so an
 * unattended signed-in browser does not suffice.
 */
export function securityRoutes(router: Router, deps: SecurityDeps): void {
  const kit = securityPageKit(deps.env, deps.cookieKey);
  const { env, cookie, context, posted, nameOf, backHome } = kit;
  const showHome = manageFactorRoutes(router, kit);
  changePasswordRoutes(router, kit, showHome, deps);
  codeFactorRoutes(router, kit, showHome, deps.throttle);

  /** The second step of the page's sign-in: each factor the user holds. */
  async function showSecondFactor(ctx: Context, state: SecurityState, userId: string, error?: string, notice?: string): Promise<void> {
    const user = { id: userId, loginName: await nameOf(userId) };
    render(ctx, await secondFactorPage(env, context(ctx, state), user, (f) => `${SECURITY_PATH}/${VERIFY_PATHS[f.id]}`, error, notice));
  }

  router.get('/security', async (ctx) => {
    const state = cookie.read(ctx);
    if (state?.user) return showHome(ctx, state);
    const fresh = cookie.fresh();
    cookie.write(ctx, fresh);
    render(ctx, securitySignInPage(context(ctx, fresh), {}));
  });

  router.post('/security/sign-in', async (ctx) => {
    const state = posted(ctx);
    if (!state) return;
    const c = context(ctx, state);
    if (throttled(ctx, c, deps.throttle)) return;
    const name = text(form(ctx).loginName, 500).trim();
    const password = text(form(ctx).password);
    const outcome = name && password ? await passwordLogin(env.db, name, password, env.announce) : { result: 'wrong' as const };
    if (outcome.result !== 'signed-in') {
      await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
      return render(ctx, securitySignInPage(c, { loginName: name, error: outcome.result === 'locked' ? c.t.accountLocked : c.t.wrongCredentials }));
    }
    // A new id on every change of who is signed in: tokens of before do not carry over.
    const next = cookie.fresh();
    if ((await heldFactors(env, outcome.userId)).length) {
      cookie.write(ctx, { ...next, pending: outcome.userId });
      return showSecondFactor(ctx, next, outcome.userId);
    }
    cookie.write(ctx, { ...next, user: outcome.userId });
    backHome(ctx);
  });

  for (const factor of SECOND_FACTORS) {
    router.post(`/security/${VERIFY_PATHS[factor.id]}`, async (ctx) => {
      const state = posted(ctx);
      if (!state) return;
      const c = context(ctx, state);
      if (throttled(ctx, c, deps.throttle)) return;
      if (!state.pending) return render(ctx, messagePage(c.lang, c.t, c.t.sessionExpired), 400);
      const outcome = await factor.verify(env, state.pending, form(ctx), c.t);
      if (!outcome.ok) {
        // A wrong code or a passkey that does not verify counts against the address, as at the login; a typing slip does not.
        if (outcome.kind !== 'slip') await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
        return showSecondFactor(ctx, state, state.pending, outcome.error);
      }
      cookie.write(ctx, { ...cookie.fresh(), user: state.pending });
      backHome(ctx);
    });
    if (factor.resend) {
      router.post(`/security/${VERIFY_PATHS[factor.id]}/resend`, async (ctx) => {
        const state = posted(ctx);
        if (!state) return;
        const c = context(ctx, state);
        if (!state.pending) return render(ctx, messagePage(c.lang, c.t, c.t.sessionExpired), 400);
        if ((await heldFactors(env, state.pending)).includes(factor)) await factor.resend?.(env, state.pending);
        await showSecondFactor(ctx, state, state.pending, undefined, c.t.codeFactorSentAgain);
      });
    }
  }

  router.post('/security/sign-out', async (ctx) => {
    if (!posted(ctx)) return;
    cookie.clear(ctx);
    backHome(ctx);
  });
}

import type Router from '@koa/router';
import type { Context } from 'koa';
import { findUser } from '../../src/storage/users.ts';
import { LOGIN_POLICY } from '../../src/domain/policies/login.ts';
import { normaliseCode } from '../../src/domain/verification-codes.ts';
import { effectivePolicy } from '../../src/queries/policies.ts';
import { smsPhoneCode, verifyPhoneWithCode } from '../../src/commands/phone-verification.ts';
import type { AuthThrottle } from '../../src/security/auth-throttle.ts';
import { form, render, text } from '../context.ts';
import type { SecondFactor } from '../factors/index.ts';
import { codeFactorSetupPage } from './pages.ts';
import { CODE_FACTORS } from './code-factor-states.ts';
import type { SecurityState } from './fresh-sign-in.ts';
import type { ShowHome } from './manage-factors.ts';
import { SECURITY_PATH, type SecurityPageKit } from './page-kit.ts';

/**
 * The security page's set-up of codes by mail or SMS (a code is sent and
 * typed once to confirm that it arrives) and its phone verification: the
 * code of the `VerifyPhone` SMS typed on the page.
 */
export function codeFactorRoutes(router: Router, kit: SecurityPageKit, showHome: ShowHome, throttle: AuthThrottle | undefined): void {
  const { env, context, posted, nameOf, backHome } = kit;
  const selfService = { db: env.db, codes: env.codes, announce: env.announce ?? (() => {}) };

  /** The set-up page of `factor`; false when it cannot be set up (not allowed, address or number not verified). */
  async function showSetup(ctx: Context, state: SecurityState, factor: SecondFactor, values: { error?: string; notice?: string } = {}): Promise<boolean> {
    const user = await findUser(env.db, state.user!);
    if (!user || !factor.allowed(await effectivePolicy(env.db, LOGIN_POLICY, user.org_id))) return false;
    const c = context(ctx, state);
    const { sent } = await factor.setup(
      env,
      { id: user.id, loginName: await nameOf(user.id) },
      { action: `${SECURITY_PATH}/${factor.id}/confirm`, csrf: c.csrf },
      false,
    );
    if (!sent?.[0]) return false;
    render(ctx, codeFactorSetupPage(c, sent[0], values), values.error ? 400 : 200);
    return true;
  }

  for (const factor of CODE_FACTORS) {
    router.post(`/security/${factor.id}`, async (ctx) => {
      const state = posted(ctx);
      if (!state) return;
      if (!state.user || !(await showSetup(ctx, state, factor))) backHome(ctx);
    });
    router.post(`/security/${factor.id}/resend`, async (ctx) => {
      const state = posted(ctx);
      if (!state) return;
      if (state.user) await factor.resend?.(env, state.user);
      if (!state.user || !(await showSetup(ctx, state, factor, { notice: context(ctx, state).t.codeFactorSentAgain }))) backHome(ctx);
    });
    router.post(`/security/${factor.id}/confirm`, async (ctx) => {
      const state = posted(ctx);
      if (!state) return;
      if (!state.user) return backHome(ctx);
      const outcome = await factor.confirmSetup(env, state.user, form(ctx), context(ctx, state).t);
      if (outcome.ok) return backHome(ctx);
      await throttle?.failed(throttle.addressOf(ctx.req));
      if (!(await showSetup(ctx, state, factor, { error: outcome.error }))) backHome(ctx);
    });
  }

  router.post('/security/phone/verify', async (ctx) => {
    const state = posted(ctx);
    if (!state) return;
    if (!state.user) return backHome(ctx);
    const t = context(ctx, state).t;
    const code = normaliseCode(text(form(ctx).code, 64));
    // What cannot be a code is a typing slip: neither counted nor looked up.
    if (!code) return showHome(ctx, state, t.codeFactorMalformed);
    const { result } = await verifyPhoneWithCode(selfService, state.user, code);
    if (result === 'ok') return showHome(ctx, state, undefined, undefined, t.phoneVerifiedNotice);
    await throttle?.failed(throttle.addressOf(ctx.req));
    const error = result === 'locked' ? t.accountLocked : result === 'expired' || result === 'used' ? t.codeFactorExpired : t.otpWrong;
    await showHome(ctx, state, error);
  });
  router.post('/security/phone/resend', async (ctx) => {
    const state = posted(ctx);
    if (!state) return;
    if (!state.user) return backHome(ctx);
    await smsPhoneCode(selfService, state.user);
    await showHome(ctx, state, undefined, undefined, context(ctx, state).t.codeFactorSentAgain);
  });
}

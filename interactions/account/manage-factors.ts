import type Router from '@koa/router';
import type { Context } from 'koa';
import { passkeysOf } from '../../src/storage/passkeys.ts';
import { AlreadyExists } from '../../src/domain/errors.ts';
import { form, render } from '../context.ts';
import { heldFactors, SECOND_FACTORS } from '../factors/index.ts';
import { totp } from '../factors/totp.ts';
import { passkey } from '../factors/passkey.ts';
import { recoveryCodesPage } from '../views/second-factor.ts';
import { otpSetupPage, type PasswordFormState, securityPage } from './pages.ts';
import type { SecurityState } from './fresh-sign-in.ts';
import { SECURITY_PATH, type SecurityPageKit } from './page-kit.ts';
import { codeFactorStates } from './code-factor-states.ts';

export type ShowHome = (ctx: Context, state: SecurityState, error?: string, password?: PasswordFormState, notice?: string) => Promise<void>;

/** The security page itself: the signed-in user's factors, with their set-up and removal. */
export function manageFactorRoutes(router: Router, kit: SecurityPageKit): ShowHome {
  const { env, context, posted, nameOf, backHome } = kit;

  const showHome: ShowHome = async (ctx, state, error, password, notice) => {
    const c = context(ctx, state);
    const userId = state.user!;
    const user = { id: userId, loginName: await nameOf(userId) };
    const { passkey: register } = await passkey.setup(env, user, { action: `${SECURITY_PATH}/passkey`, csrf: c.csrf }, false);
    const passkeys = (await passkeysOf(env.db, userId)).map((p) => ({ id: p.id, name: p.name }));
    const held = await heldFactors(env, userId);
    const { codeFactors, phone } = await codeFactorStates(env, userId);
    const refused = error || (password && !password.changed);
    const values = { loginName: user.loginName, otp: held.includes(totp), codeFactors, phone, passkeys, register, error, notice, password };
    render(ctx, securityPage(c, values), refused ? 400 : 200);
  };

  /** The authenticator app's set-up page; false when there is no set-up to show. */
  async function showOtpSetup(ctx: Context, state: SecurityState, resume: boolean, error?: string): Promise<boolean> {
    const user = { id: state.user!, loginName: await nameOf(state.user!) };
    const { otp } = await totp.setup(env, user, { action: `${SECURITY_PATH}/otp/confirm`, csrf: '' }, resume);
    if (!otp) return false;
    render(ctx, otpSetupPage(context(ctx, state), { ...otp, error }), error ? 400 : 200);
    return true;
  }

  router.post('/security/passkey', async (ctx) => {
    const state = posted(ctx);
    if (!state) return;
    if (!state.user) return backHome(ctx);
    const outcome = await passkey.confirmSetup(env, state.user, form(ctx), context(ctx, state).t);
    if (!outcome.ok) return showHome(ctx, state, outcome.error);
    backHome(ctx);
  });

  router.post('/security/otp', async (ctx) => {
    const state = posted(ctx);
    if (!state) return;
    if (!state.user) return backHome(ctx);
    try {
      await showOtpSetup(ctx, state, false);
    } catch (err) {
      if (!(err instanceof AlreadyExists)) throw err;
      backHome(ctx);
    }
  });

  router.post('/security/otp/confirm', async (ctx) => {
    const state = posted(ctx);
    if (!state) return;
    if (!state.user) return backHome(ctx);
    const c = context(ctx, state);
    const outcome = await totp.confirmSetup(env, state.user, form(ctx), c.t);
    if (outcome.ok) return render(ctx, recoveryCodesPage(c, outcome.recoveryCodes ?? []));
    if (!outcome.error || !(await showOtpSetup(ctx, state, true, outcome.error))) backHome(ctx);
  });

  for (const factor of SECOND_FACTORS) {
    router.post(`/security/${factor.id}/remove`, async (ctx) => {
      const state = posted(ctx);
      if (!state) return;
      if (state.user) await factor.remove(env, state.user, form(ctx));
      backHome(ctx);
    });
  }

  return showHome;
}

import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AuthThrottle } from '../../src/security/auth-throttle.ts';
import { findUser } from '../../src/storage/users.ts';
import { passkeysOf } from '../../src/storage/passkeys.ts';
import { loginName } from '../../src/domain/users.ts';
import { AlreadyExists } from '../../src/domain/errors.ts';
import { passwordLogin } from '../../src/commands/password-login.ts';
import { INTERACTION_PATH } from '../../src/engine/routes.ts';
import { CATALOGUES, chooseLanguage } from '../../src/pages/i18n.ts';
import { messagePage } from '../../src/pages/messages.ts';
import { form, render, text, throttled } from '../context.ts';
import { type FactorEnv, heldFactors, SECOND_FACTORS, type SecondFactor } from '../factors/index.ts';
import { totp } from '../factors/totp.ts';
import { passkey } from '../factors/passkey.ts';
import { secondFactorPage } from '../steps/second-factor.ts';
import { otpSetupPage, securityPage, securitySignInPage } from './pages.ts';
import { recoveryCodesPage } from '../views/second-factor.ts';
import type { SecurityContext } from '../views/parts.ts';
import { freshSignIn, type SecurityState } from './fresh-sign-in.ts';

const PATH = `${INTERACTION_PATH}/security`;

/** Where each factor's answer to the page's own sign-in is posted, under PATH. */
const VERIFY_PATHS: Record<SecondFactor['id'], string> = { otp: 'code', passkey: 'passkey-factor' };

export interface SecurityDeps {
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
  const { env } = deps;
  const cookie = freshSignIn(deps.cookieKey, PATH, env.issuer.startsWith('https:'));

  function context(ctx: Context, state: SecurityState): SecurityContext {
    const lang = chooseLanguage(undefined, ctx.get('accept-language'));
    return { lang, t: CATALOGUES[lang]!, action: PATH, csrf: cookie.csrfOf(state) };
  }

  /** The state of a POST with a valid CSRF token, or undefined after rendering the "form expired" page. */
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

  async function showHome(ctx: Context, state: SecurityState, error?: string): Promise<void> {
    const c = context(ctx, state);
    const userId = state.user!;
    const user = { id: userId, loginName: await nameOf(userId) };
    const { passkey: register } = await passkey.setup(env, user, { action: `${PATH}/passkey`, csrf: c.csrf }, false);
    const passkeys = (await passkeysOf(env.db, userId)).map((p) => ({ id: p.id, name: p.name }));
    const otp = (await heldFactors(env, userId)).includes(totp);
    render(ctx, securityPage(c, { loginName: user.loginName, otp, passkeys, register, error }), error ? 400 : 200);
  }

  /** The second step of the page's sign-in: each factor the user holds. */
  async function showSecondFactor(ctx: Context, state: SecurityState, userId: string, error?: string): Promise<void> {
    const user = { id: userId, loginName: await nameOf(userId) };
    render(ctx, await secondFactorPage(env, context(ctx, state), user, (f) => `${PATH}/${VERIFY_PATHS[f.id]}`, error));
  }

  async function showOtpSetup(ctx: Context, state: SecurityState, resume: boolean, error?: string): Promise<boolean> {
    const { otp } = await totp.setup(env, { id: state.user!, loginName: await nameOf(state.user!) }, { action: `${PATH}/otp/confirm`, csrf: '' }, resume);
    if (!otp) return false;
    render(ctx, otpSetupPage(context(ctx, state), { ...otp, error }), error ? 400 : 200);
    return true;
  }

  function backHome(ctx: Context): void {
    ctx.status = 303;
    ctx.redirect(PATH);
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
      if (!state.pending) return render(ctx, messagePage(c.lang, c.t, c.t.sessionExpired), 400);
      const outcome = await factor.verify(env, state.pending, form(ctx), c.t);
      if (!outcome.ok) {
        // A wrong code counts against the address, as a wrong password does.
        if (outcome.kind === 'guess') await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
        return showSecondFactor(ctx, state, state.pending, outcome.error);
      }
      cookie.write(ctx, { ...cookie.fresh(), user: state.pending });
      backHome(ctx);
    });
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

  router.post('/security/sign-out', async (ctx) => {
    if (!posted(ctx)) return;
    cookie.clear(ctx);
    backHome(ctx);
  });
}

import { createHmac, randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import type { Context } from 'koa';
import QRCode from 'qrcode';
import type { Database } from '../src/storage/database.ts';
import type { AuthThrottle } from '../src/security/auth-throttle.ts';
import { digestsEqual, hmacKey } from '../src/security/secrets.ts';
import { findUser } from '../src/storage/users.ts';
import { loginName } from '../src/domain/users.ts';
import { base32Encode, otpauthUri } from '../src/domain/totp.ts';
import { passwordLogin } from '../src/commands/password-login.ts';
import { beginOtpSetup, checkSecondFactor, confirmOtpSetup, hasOtp, pendingOtpSecret, removeOwnOtp, type FactorKeys } from '../src/commands/otp.ts';
import { AlreadyExists } from '../src/domain/errors.ts';
import {
  authenticationCeremony,
  completeAuthentication,
  completeRegistration,
  registrationCeremony,
  removeOwnPasskey,
  type PasskeyRefusal,
  type RelyingParty,
} from '../src/commands/passkeys.ts';
import { passkeysOf } from '../src/storage/passkeys.ts';
import type { ChallengeStore } from '../src/security/challenges.ts';
import { INTERACTION_PATH } from '../src/engine/routes.ts';
import { CATALOGUES, chooseLanguage, translate } from '../src/pages/i18n.ts';
import { otpPage, otpSetupPage, recoveryCodesPage, securityPage, securitySignInPage, type SecurityContext } from './views.ts';
import { messagePage } from '../src/pages/messages.ts';
import type { Messages } from '../src/pages/i18n.ts';

export interface SecurityDeps {
  db: Database;
  keys: FactorKeys;
  /** Signs the security page's own short session cookie. */
  cookieKey: Buffer;
  /** The issuer: its host names the account in authenticator apps; https makes the cookie Secure. */
  issuer: string;
  throttle?: AuthThrottle;
  announce?: () => void;
  challenges: ChallengeStore;
  rp: RelyingParty;
  render(ctx: Context, html: string, status?: number): void;
}

const PATH = `${INTERACTION_PATH}/security`;
const COOKIE = '_security';
/** How long the fresh sign-in in front of the page lasts. */
const FRESH_SECONDS = 600;

/**
 * The page's state in a signed cookie: a random id (the CSRF tokens are
 * bound to it), the user whose password was right and who still owes a code
 * (`pending`), or the signed-in user, and when it ends.
 */
interface SecurityState {
  id: string;
  pending?: string;
  user?: string;
  exp: number;
}

function form(ctx: Context): Record<string, unknown> {
  return (ctx.request.body ?? {}) as Record<string, unknown>;
}

function text(value: unknown, max = 1024): string {
  return typeof value === 'string' ? value.slice(0, max) : '';
}

/** The page's message for a refused passkey response. */
export function passkeyError(t: Messages, reason: PasskeyRefusal): string {
  return reason === 'malformed' ? t.passkeyMalformed : reason === 'challenge' ? t.passkeyExpired : t.passkeyFailed;
}

/**
 * `/ui/login/security` (docs/security.md, Second factors): a user manages
 * their own factors behind a fresh sign-in of their own (password, then a
 * code when they have an authenticator app), separate from any app's
 * session, so an unattended signed-in browser does not suffice.
 */
export function securityRoutes(router: Router, deps: SecurityDeps): void {
  const secure = deps.issuer.startsWith('https:');
  const issuerHost = new URL(deps.issuer).host;

  function mac(payload: string): string {
    return createHmac('sha256', hmacKey(deps.cookieKey)).update(payload).digest('base64url');
  }

  function readState(ctx: Context): SecurityState | undefined {
    const raw = ctx.cookies.get(COOKIE) ?? '';
    const [payload = '', signature = ''] = raw.split('.');
    if (!payload || !digestsEqual(Buffer.from(mac(payload)), Buffer.from(signature))) return undefined;
    try {
      const state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as SecurityState;
      return typeof state.id === 'string' && typeof state.exp === 'number' && state.exp > Date.now() / 1000 ? state : undefined;
    } catch {
      return undefined;
    }
  }

  function writeState(ctx: Context, state: SecurityState): void {
    const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
    ctx.cookies.set(COOKIE, `${payload}.${mac(payload)}`, { httpOnly: true, sameSite: 'strict', secure, path: PATH, overwrite: true });
  }

  function newState(): SecurityState {
    return { id: randomBytes(16).toString('base64url'), exp: Math.floor(Date.now() / 1000) + FRESH_SECONDS };
  }

  function context(ctx: Context, state: SecurityState): SecurityContext {
    const lang = chooseLanguage(undefined, ctx.get('accept-language'));
    return { lang, t: CATALOGUES[lang]!, action: PATH, csrf: mac(`csrf:${state.id}`) };
  }

  /** The state of a POST with a valid CSRF token, or undefined after rendering the "form expired" page. */
  function posted(ctx: Context): SecurityState | undefined {
    const state = readState(ctx);
    if (state && digestsEqual(Buffer.from(mac(`csrf:${state.id}`)), Buffer.from(text(form(ctx).csrf, 200)))) return state;
    const c = context(ctx, state ?? newState());
    deps.render(ctx, messagePage(c.lang, c.t, c.t.formExpired), 403);
    return undefined;
  }

  async function nameOf(userId: string): Promise<string> {
    const user = await findUser(deps.db, userId);
    return user ? loginName(user.user_name, user.primary_domain) : '';
  }

  async function showHome(ctx: Context, state: SecurityState, error?: string): Promise<void> {
    const c = context(ctx, state);
    const userId = state.user!;
    const ceremony = await registrationCeremony(deps.db, deps.challenges, deps.rp, userId);
    const passkeys = (await passkeysOf(deps.db, userId)).map((p) => ({ id: p.id, name: p.name }));
    deps.render(
      ctx,
      securityPage(c, {
        loginName: await nameOf(userId),
        otp: await hasOtp(deps.db, userId),
        passkeys,
        register: { ...ceremony, action: `${PATH}/passkey`, csrf: c.csrf },
        error,
      }),
      error ? 400 : 200,
    );
  }

  /** The second step of the page's sign-in: a code field when the user has an app, a passkey button when they have passkeys. */
  async function showSecondFactor(ctx: Context, state: SecurityState, userId: string, error?: string): Promise<void> {
    const c = context(ctx, state);
    const otp = await hasOtp(deps.db, userId);
    const passkey = (await passkeysOf(deps.db, userId)).length
      ? { ...(await authenticationCeremony(deps.db, deps.challenges, deps.rp, userId)), action: `${PATH}/passkey-factor`, csrf: c.csrf }
      : undefined;
    deps.render(ctx, otpPage(c, `${PATH}/code`, { loginName: await nameOf(userId), error, otp, passkey }));
  }

  async function showSetup(ctx: Context, state: SecurityState, secret: Buffer, error?: string): Promise<void> {
    const c = context(ctx, state);
    const uri = otpauthUri(secret, `Portcullis (${issuerHost})`, await nameOf(state.user!));
    const qrSvg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
    deps.render(ctx, otpSetupPage(c, { qrSvg, secret: base32Encode(secret), error }), error ? 400 : 200);
  }

  function backHome(ctx: Context): void {
    ctx.status = 303;
    ctx.redirect(PATH);
  }

  router.get('/security', async (ctx) => {
    const state = readState(ctx);
    if (state?.user) return showHome(ctx, state);
    const fresh = newState();
    writeState(ctx, fresh);
    deps.render(ctx, securitySignInPage(context(ctx, fresh), {}));
  });

  router.post('/security/sign-in', async (ctx) => {
    const state = posted(ctx);
    if (!state) return;
    const c = context(ctx, state);
    const wait = deps.throttle?.retryAfterOf(ctx.req);
    if (wait !== undefined) {
      ctx.set('Retry-After', String(wait));
      return deps.render(ctx, messagePage(c.lang, c.t, translate(c.t, 'tooManyAttempts', { seconds: wait })), 429);
    }
    const name = text(form(ctx).loginName, 500).trim();
    const password = text(form(ctx).password);
    const outcome = name && password ? await passwordLogin(deps.db, name, password, deps.announce) : { result: 'wrong' as const };
    if (outcome.result !== 'signed-in') {
      await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
      return deps.render(ctx, securitySignInPage(c, { loginName: name, error: outcome.result === 'locked' ? c.t.accountLocked : c.t.wrongCredentials }));
    }
    // A new id on every change of who is signed in: tokens of before do not carry over.
    const next = newState();
    if ((await hasOtp(deps.db, outcome.userId)) || (await passkeysOf(deps.db, outcome.userId)).length) {
      writeState(ctx, { ...next, pending: outcome.userId });
      return showSecondFactor(ctx, next, outcome.userId);
    }
    writeState(ctx, { ...next, user: outcome.userId });
    backHome(ctx);
  });

  router.post('/security/code', async (ctx) => {
    const state = posted(ctx);
    if (!state) return;
    const c = context(ctx, state);
    if (!state.pending) return deps.render(ctx, messagePage(c.lang, c.t, c.t.sessionExpired), 400);
    const outcome = await checkSecondFactor(deps.db, deps.keys, state.pending, text(form(ctx).code, 64), deps.announce);
    if (outcome.result !== 'ok') {
      if (outcome.result !== 'malformed') await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
      const error = outcome.result === 'locked' ? c.t.accountLocked : outcome.result === 'malformed' ? c.t.otpMalformed : c.t.otpWrong;
      return showSecondFactor(ctx, state, state.pending, error);
    }
    writeState(ctx, { ...newState(), user: state.pending });
    backHome(ctx);
  });

  router.post('/security/passkey-factor', async (ctx) => {
    const state = posted(ctx);
    if (!state) return;
    const c = context(ctx, state);
    if (!state.pending) return deps.render(ctx, messagePage(c.lang, c.t, c.t.sessionExpired), 400);
    const body = form(ctx);
    const outcome = await completeAuthentication(deps.db, deps.challenges, deps.rp, text(body.challengeId, 64), text(body.response, 16384), state.pending);
    if (!outcome.ok) return showSecondFactor(ctx, state, state.pending, passkeyError(c.t, outcome.reason));
    const user = await findUser(deps.db, outcome.value);
    if (user?.state !== 'active') return showSecondFactor(ctx, state, state.pending, c.t.accountLocked);
    writeState(ctx, { ...newState(), user: state.pending });
    backHome(ctx);
  });

  router.post('/security/passkey', async (ctx) => {
    const state = posted(ctx);
    if (!state) return;
    if (!state.user) return backHome(ctx);
    const c = context(ctx, state);
    const body = form(ctx);
    const name = text(body.name, 100).trim() || 'Passkey';
    const outcome = await completeRegistration(deps.db, deps.challenges, deps.rp, state.user, text(body.challengeId, 64), text(body.response, 16384), name);
    if (!outcome.ok) return showHome(ctx, state, passkeyError(c.t, outcome.reason));
    backHome(ctx);
  });

  router.post('/security/passkey/remove', async (ctx) => {
    const state = posted(ctx);
    if (!state) return;
    if (state.user) await removeOwnPasskey(deps.db, state.user, text(form(ctx).passkeyId, 64));
    backHome(ctx);
  });

  router.post('/security/otp', async (ctx) => {
    const state = posted(ctx);
    if (!state) return;
    if (!state.user) return backHome(ctx);
    try {
      await showSetup(ctx, state, await beginOtpSetup(deps.db, deps.keys, state.user));
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
    const secret = await pendingOtpSecret(deps.db, deps.keys, state.user);
    if (!secret) return backHome(ctx);
    const code = text(form(ctx).code, 64).replace(/\s/g, '');
    if (!/^[0-9]{6}$/.test(code)) return showSetup(ctx, state, secret, c.t.otpMalformed);
    const codes = await confirmOtpSetup(deps.db, deps.keys, { userId: state.user }, state.user, code);
    if (!codes) return showSetup(ctx, state, secret, c.t.otpWrong);
    deps.render(ctx, recoveryCodesPage(c, codes));
  });

  router.post('/security/otp/remove', async (ctx) => {
    const state = posted(ctx);
    if (!state) return;
    if (state.user) await removeOwnOtp(deps.db, state.user);
    backHome(ctx);
  });

  router.post('/security/sign-out', async (ctx) => {
    if (!posted(ctx)) return;
    ctx.cookies.set(COOKIE, null, { path: PATH });
    backHome(ctx);
  });
}

import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { Database } from '../src/storage/database.ts';
import type { Announce } from '../src/storage/invalidation.ts';
import type { Logger } from '../src/logger.ts';
import type { EngineHolder } from '../src/engine/engine-holder.ts';
import type { AuthThrottle } from '../src/security/auth-throttle.ts';
import { INTERACTION_PATH } from '../src/engine/routes.ts';
import { PAGE_HEADERS } from '../src/pages/layout.ts';
import { liveBrowserAccounts, readBrowserAccounts } from '../src/engine/browser-accounts.ts';
import { addGrantableScopes } from '../src/engine/api-scope.ts';
import { saveGrantChange } from '../src/engine/first-party-grant.ts';
import { acrOf } from '../src/engine/acr.ts';
import type { EffectivePolicy } from '../src/domain/policies/kind.ts';
import { LOGIN_POLICY } from '../src/domain/policies/login.ts';
import { findUser } from '../src/storage/users.ts';
import { loginName } from '../src/domain/users.ts';
import { AlreadyExists, InvalidArgument, Unavailable } from '../src/domain/errors.ts';
import { passwordLogin } from '../src/commands/password-login.ts';
import { registerHuman } from '../src/commands/register-human.ts';
import { beginOtpSetup, checkSecondFactor, confirmOtpSetup, pendingOtpSecret, type FactorKeys } from '../src/commands/otp.ts';
import QRCode from 'qrcode';
import { base32Encode, otpauthUri } from '../src/domain/totp.ts';
import type { OrgSettings } from '../src/commands/setup-org.ts';
import { validator } from '../src/admin/validate.ts';
import { humanSchema } from '../src/admin/schemas.ts';
import type { HumanInput } from '../src/commands/setup-org.ts';
import { CATALOGUES, chooseLanguage, translate } from '../src/pages/i18n.ts';
import { csrfToken, csrfValid } from './csrf.ts';
import { dropUnstorableFields } from './form-input.ts';
import { passkeyError, securityRoutes } from './security.ts';
import { authenticationCeremony, completeAuthentication, completeRegistration, registrationCeremony, relyingPartyOf } from '../src/commands/passkeys.ts';
import { secondFactorRequired, type ForcedMfa } from '../src/engine/second-factor-rule.ts';
import { SECOND_FACTOR_REASON } from '../src/engine/interaction-policy.ts';
import { secondFactorsOf } from '../src/storage/second-factors.ts';
import type { ChallengeStore } from '../src/security/challenges.ts';
import {
  accountPickerPage,
  loginNamePage,
  otpPage,
  passwordPage,
  recoveryCodesPage,
  registrationPage,
  secondFactorSetupPage,
  type AccountChoice,
  type OtpSetup,
  type PageContext,
  type RegistrationValues,
} from './views.ts';
import { RETRY_AFTER_SECONDS, StoreUnavailable } from '../src/storage/outage.ts';
import { messagePage, unavailablePage } from '../src/pages/messages.ts';

export interface InteractionDeps {
  engine: EngineHolder;
  db: Database;
  log: Logger;
  orgSettings: OrgSettings;
  csrfKey: Buffer;
  sessionLifetime: number;
  /** SameSite of the engine's session cookie (none while ENABLE_HTTP_POST_METHODS lets apps POST cross-site). */
  sessionSameSite: 'lax' | 'none';
  /** Told how each sign-in attempt ended (for /metrics). */
  onLogin?: (result: 'success' | 'failure') => void;
  /** Counts wrong passwords and unknown login names per client address. */
  throttle?: AuthThrottle;
  /** Tells every node's caches that users changed (a login locked or unlocked one). */
  announce?: Announce;
  /** Login policies, read through the per-node policy cache. */
  policies: EffectivePolicy;
  /** Whether the login policy forces a second factor on a user (forceMfa). */
  forcedMfa: ForcedMfa;
  /** Keys of second factors (sealed TOTP secrets, recovery code digests). */
  factorKeys: FactorKeys;
  /** Signs the cookie of the security page's own fresh sign-in. */
  securityKey: Buffer;
  /** Single-use WebAuthn challenges (engine-record storage). */
  challenges: ChallengeStore;
  /** WEBAUTHN_RP_ID; the issuer's host when unset. */
  webauthnRpId?: string;
}

/**
 * A login whose password was right and which still owes a second factor
 * (`setup`: one it must first set up; `verified`: set up and confirmed, the
 * recovery codes on screen): kept in the interaction, server side.
 */
const PENDING = 'pendingSecondFactor';

interface PendingLogin {
  accountId: string;
  loginName: string;
  setup?: boolean;
  verified?: boolean;
}

/** RFC 8176: a recovery code is a one-time password too. */
const MFA_AMR = ['pwd', 'otp', 'mfa'];
/** A password and a passkey: hardware-secured key (RFC 8176 hwk). */
const PASSKEY_FACTOR_AMR = ['pwd', 'hwk', 'mfa'];
/** A passkey alone: a hardware-secured key, unlocked by the user's verification (biometric or PIN). */
const PASSKEY_AMR = ['hwk', 'user'];

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

interface Loaded {
  provider: Provider;
  interaction: Interaction;
  page: PageContext;
  client: { clientId: string; clientName?: string; org_id?: string } | undefined;
}

const parseHuman = validator<HumanInput>(humanSchema);

// A first check so every field's error shows at once; the schema's email
// format decides after it.
const LOOKS_LIKE_EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A request whose interaction is gone (expired, finished, other browser) gets a page saying so. */
class InteractionGone extends Error {}

function form(ctx: Context): Record<string, unknown> {
  return (ctx.request.body ?? {}) as Record<string, unknown>;
}

function text(value: unknown, max = 1024): string {
  return typeof value === 'string' ? value.slice(0, max) : '';
}

function epochNow(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * The login UI (docs/oidc.md, Browser sign-in): login name, password,
 * account picker and registration pages for the engine's interactions.
 */
export function interactionRoutes(deps: InteractionDeps): Router {
  // One spelling of each page: matched as written, so a path in another
  // letter case is not a page (it would skip this router's own middleware).
  const router = new Router({ prefix: INTERACTION_PATH, sensitive: true });
  const minPassword = deps.orgSettings.passwordPolicy.minLength;

  async function load(ctx: Context): Promise<Loaded> {
    const provider = deps.engine.provider;
    let interaction: Interaction;
    try {
      interaction = await provider.interactionDetails(ctx.req, ctx.res);
    } catch (err) {
      if (err instanceof StoreUnavailable) throw err;
      throw new InteractionGone();
    }
    if (interaction.uid !== ctx.params.uid) throw new InteractionGone();
    const params = interaction.params as Record<string, unknown>;
    const client = typeof params.client_id === 'string' ? ((await provider.Client.find(params.client_id)) as unknown as Loaded['client']) : undefined;
    const lang = chooseLanguage(params.ui_locales, ctx.get('accept-language'));
    return {
      provider,
      interaction,
      client,
      page: {
        lang,
        t: CATALOGUES[lang]!,
        action: `${INTERACTION_PATH}/${interaction.uid}`,
        csrf: csrfToken(deps.csrfKey, interaction.uid),
        appName: client?.clientName ?? client?.clientId ?? '',
      },
    };
  }

  function render(ctx: Context, html: string, status = 200): void {
    ctx.status = status;
    ctx.type = 'html';
    ctx.set(PAGE_HEADERS);
    ctx.body = html;
  }

  /** Saves the result and sends the browser back to the engine to finish the authorization. */
  async function finish(ctx: Context, loaded: Loaded, result: Record<string, unknown>): Promise<void> {
    const { interaction } = loaded;
    const { [PENDING]: _done, ...earlier } = interaction.result ?? {};
    interaction.result = { ...earlier, ...result };
    await interaction.save(Math.max(1, (interaction.exp ?? epochNow() + 60) - epochNow()));
    ctx.status = 303;
    ctx.redirect(interaction.returnTo);
  }

  /**
   * Signs `accountId` in, with the methods used (RFC 8176 `amr`, which the
   * engine puts in the ID token). When the browser's current session belongs to
   * another user, that session is kept for them (the account picker lists
   * it): the browser switches to this user's own session, or to a new one.
   */
  async function finishLogin(ctx: Context, loaded: Loaded, accountId: string, extra: Record<string, unknown> = {}, amr?: string[]): Promise<void> {
    await switchSession(ctx, loaded, accountId);
    // Signing in is also choosing the account: a pending select_account
    // prompt (requested, or several users in this browser) is settled too.
    // So is consent, which our apps get without a page: the first-party rule
    // (src/engine/first-party-grant.ts) grants the requested scopes when the
    // engine resumes, so a consent prompt (the one offline_access asks for)
    // would only cost the browser another round trip through this UI.
    const methods = amr ?? ['pwd'];
    await finish(ctx, loaded, {
      ...extra,
      select_account: {},
      consent: {},
      // The acr the login achieved (src/engine/acr.ts), in the ID token whether or not acr_values asked.
      login: { accountId, remember: true, amr: methods, acr: acrOf(methods) },
    });
  }

  async function switchSession(ctx: Context, loaded: Loaded, accountId: string): Promise<void> {
    const { provider, interaction } = loaded;
    const current = interaction.session?.accountId;
    if (!current || current === accountId) return;
    const pctx = provider.createContext(ctx.req, ctx.res);
    const live = await liveBrowserAccounts(provider, readBrowserAccounts(pctx.cookies));
    const own = live.find((a) => a.accountId === accountId);
    pctx.cookies.set(provider.cookieName('session'), own ? own.sessionId : null, {
      httpOnly: true,
      sameSite: deps.sessionSameSite,
      path: '/',
      maxAge: deps.sessionLifetime * 1000,
    });
    delete (interaction as { session?: unknown }).session;
  }

  async function accountChoices(ctx: Context, provider: Provider): Promise<AccountChoice[]> {
    const live = await liveBrowserAccounts(provider, readBrowserAccounts(provider.createContext(ctx.req, ctx.res).cookies));
    const users = await Promise.all(live.map((a) => findUser(deps.db, a.accountId)));
    return users.flatMap((user) =>
      user && user.state === 'active'
        ? [{ accountId: user.id, name: user.display_name ?? user.name ?? user.user_name, loginName: loginName(user.user_name, user.primary_domain) }]
        : [],
    );
  }

  async function currentLoginName(loaded: Loaded): Promise<string | undefined> {
    const params = loaded.interaction.params as Record<string, unknown>;
    if (typeof params.login_hint === 'string') return params.login_hint.slice(0, 500);
    const accountId = loaded.interaction.session?.accountId;
    const user = accountId ? await findUser(deps.db, accountId) : undefined;
    return user ? loginName(user.user_name, user.primary_domain) : undefined;
  }

  /**
   * First-party apps skip the consent screen: the grant gets whatever the
   * engine says is missing, and the flow continues without a page.
   */
  async function grantConsent(ctx: Context, loaded: Loaded): Promise<void> {
    const { provider, interaction } = loaded;
    const accountId = interaction.session?.accountId;
    const clientId = (interaction.params as Record<string, string>).client_id;
    const existing = interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined;
    const grant = existing ?? new provider.Grant({ accountId, clientId });
    const missing = interaction.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
    const grantId = await saveGrantChange(grant, Boolean(existing), () => {
      addGrantableScopes(grant, loaded.client, missing.missingOIDCScope ?? []);
      if (missing.missingOIDCClaims?.length) grant.addOIDCClaims(missing.missingOIDCClaims);
    });
    await finish(ctx, loaded, { consent: { grantId } });
  }

  /**
   * Registration creates the user in the app's org, so it needs an app of
   * ours, and that org's login policy must allow it (allowRegister).
   */
  async function canRegister(loaded: Loaded): Promise<boolean> {
    const orgId = loaded.client?.org_id;
    return Boolean(orgId) && (await deps.policies(LOGIN_POLICY, orgId!)).allowRegister;
  }

  /** The registration form, or a page saying registration is closed for this app. */
  async function registrationForm(ctx: Context, loaded: Loaded): Promise<void> {
    if (!(await canRegister(loaded))) return render(ctx, messagePage(loaded.page.lang, loaded.page.t, loaded.page.t.registrationClosed), 403);
    render(ctx, registrationPage(loaded.page, {}, minPassword));
  }

  router.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const lang = chooseLanguage(undefined, ctx.get('accept-language'));
      const t = CATALOGUES[lang]!;
      if (err instanceof StoreUnavailable) {
        ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
        return render(ctx, unavailablePage(lang), 503);
      }
      if (err instanceof Unavailable) {
        ctx.set('Retry-After', String(err.retryAfter));
        return render(ctx, messagePage(lang, t, t.busy), 503);
      }
      if (!(err instanceof InteractionGone)) throw err;
      render(ctx, messagePage(lang, t, t.sessionExpired), 400);
    }
  });
  router.use(
    bodyParser({
      enableTypes: ['form'],
      formLimit: '64kb',
      onError: () => {
        throw new InteractionGone();
      },
    }),
  );
  router.use(dropUnstorableFields);

  /** POSTs must carry the interaction's CSRF token. */
  function checkCsrf(ctx: Context, loaded: Loaded): boolean {
    if (csrfValid(deps.csrfKey, loaded.interaction.uid, text(form(ctx).csrf, 200))) return true;
    render(ctx, messagePage(loaded.page.lang, loaded.page.t, loaded.page.t.formExpired), 403);
    return false;
  }

  const rp = relyingPartyOf(deps.engine.provider.issuer, deps.webauthnRpId);

  /**
   * The login-name page, with "Sign in with a passkey" when the login policy
   * allows passwordless sign-in: the app's org's, before the user is known
   * (else the instance default).
   */
  async function loginNameView(ctx: Context, loaded: Loaded, values: { loginName?: string; error?: string }, status = 200): Promise<void> {
    const policy = await deps.policies(LOGIN_POLICY, loaded.client?.org_id ?? '');
    const passkey =
      policy.passwordlessType === 'PASSWORDLESS_TYPE_ALLOWED'
        ? { ...(await authenticationCeremony(deps.db, deps.challenges, rp)), action: `${loaded.page.action}/passkey`, csrf: loaded.page.csrf }
        : undefined;
    render(ctx, loginNamePage(loaded.page, { ...values, canRegister: await canRegister(loaded), passkey }), status);
  }

  /** The second step after the password: a code field (authenticator app) and/or a passkey button. */
  async function secondFactorView(ctx: Context, loaded: Loaded, pending: PendingLogin, error?: string): Promise<void> {
    const factors = await secondFactorsOf(deps.db, pending.accountId);
    const otp = factors.otp;
    const passkey = factors.passkey
      ? {
          ...(await authenticationCeremony(deps.db, deps.challenges, rp, pending.accountId)),
          action: `${loaded.page.action}/passkey-factor`,
          csrf: loaded.page.csrf,
        }
      : undefined;
    render(ctx, otpPage(loaded.page, `${loaded.page.action}/otp`, { loginName: pending.loginName, error, otp, passkey }));
  }

  securityRoutes(router, {
    challenges: deps.challenges,
    rp,
    db: deps.db,
    keys: deps.factorKeys,
    cookieKey: deps.securityKey,
    issuer: deps.engine.provider.issuer,
    throttle: deps.throttle,
    announce: () => deps.announce?.('users'),
    render,
  });

  router.get('/:uid', async (ctx) => {
    const loaded = await load(ctx);
    const prompt = loaded.interaction.prompt.name;
    if (prompt === 'consent') return grantConsent(ctx, loaded);
    if (prompt === 'create') return registrationForm(ctx, loaded);
    if (await secondFactorStep(ctx, loaded)) return;
    if (prompt === 'select_account' && ctx.query.other === undefined) {
      const choices = await accountChoices(ctx, loaded.provider);
      if (choices.length) return render(ctx, accountPickerPage(loaded.page, choices));
    }
    const prefill = ctx.query.other === undefined ? await currentLoginName(loaded) : undefined;
    await loginNameView(ctx, loaded, { loginName: prefill });
  });

  router.post('/:uid/login-name', async (ctx) => {
    const loaded = await load(ctx);
    if (!checkCsrf(ctx, loaded)) return;
    const name = text(form(ctx).loginName, 500).trim();
    if (!name) return loginNameView(ctx, loaded, { error: loaded.page.t.fieldRequired });
    // Unknown login names get the password page too: the two steps do not
    // tell who has an account.
    render(ctx, passwordPage(loaded.page, { loginName: name }));
  });

  router.post('/:uid/password', async (ctx) => {
    const loaded = await load(ctx);
    if (!checkCsrf(ctx, loaded)) return;
    const wait = deps.throttle?.retryAfterOf(ctx.req);
    if (wait !== undefined) {
      ctx.set('Retry-After', String(wait));
      return render(ctx, messagePage(loaded.page.lang, loaded.page.t, translate(loaded.page.t, 'tooManyAttempts', { seconds: wait })), 429);
    }
    const name = text(form(ctx).loginName, 500).trim();
    const password = text(form(ctx).password);
    const outcome = name && password ? await passwordLogin(deps.db, name, password, () => deps.announce?.('users')) : { result: 'wrong' as const };
    if (outcome.result !== 'signed-in') {
      await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
      deps.log.info({ requestId: ctx.state.requestId, event: 'login_failed', locked: outcome.result === 'locked' }, 'login failed');
      deps.onLogin?.('failure');
      // While locked, the same answer whatever the password: no oracle.
      const error = outcome.result === 'locked' ? loaded.page.t.accountLocked : loaded.page.t.wrongCredentials;
      return render(ctx, passwordPage(loaded.page, { loginName: name, error }));
    }
    const accountId = outcome.userId;
    const factors = await secondFactorsOf(deps.db, accountId);
    if (factors.otp || factors.passkey) {
      await savePending(loaded, { accountId, loginName: name });
      return secondFactorView(ctx, loaded, { accountId, loginName: name });
    }
    if (await mfaRequired(loaded, accountId)) return beginForcedSetup(ctx, loaded, { accountId, loginName: name, setup: true });
    loginSucceeded(ctx, accountId);
    await finishLogin(ctx, loaded, accountId);
  });

  /** A second factor is required of this login (src/engine/second-factor-rule.ts: forceMfa or acr_values=mfa). */
  function mfaRequired(loaded: Loaded, accountId: string): Promise<boolean> {
    return secondFactorRequired(deps.forcedMfa, accountId, (loaded.interaction.params as Record<string, unknown>).acr_values);
  }

  /**
   * A signed-in user whose session lacks the second factor now required
   * (the interaction policy's reason, and no other) and who has one: the
   * second-factor step for that user, the password being already proven by
   * the session. Without a factor the login starts over, at the password:
   * a browser left signed in is not enough to set one up.
   */
  async function secondFactorStep(ctx: Context, loaded: Loaded): Promise<boolean> {
    const { prompt, session } = loaded.interaction;
    if (prompt.name !== 'login' || prompt.reasons.length !== 1 || prompt.reasons[0] !== SECOND_FACTOR_REASON || !session?.accountId) return false;
    const user = await findUser(deps.db, session.accountId);
    if (user?.state !== 'active') return false;
    const factors = await secondFactorsOf(deps.db, user.id);
    if (!factors.otp && !factors.passkey) return false;
    const pending = { accountId: user.id, loginName: loginName(user.user_name, user.primary_domain) };
    await savePending(loaded, pending);
    await secondFactorView(ctx, loaded, pending);
    return true;
  }

  /** `extra` joins the interaction's result too (a registration's `create`), to be there when the login finishes. */
  async function savePending(loaded: Loaded, pending: PendingLogin, extra: Record<string, unknown> = {}): Promise<void> {
    const { interaction } = loaded;
    interaction.result = { ...interaction.result, ...extra, [PENDING]: pending };
    await interaction.save(Math.max(1, (interaction.exp ?? epochNow() + 60) - epochNow()));
  }

  /** The factors the login policy of the user's org lets them set up: an authenticator app (OTP), a passkey (U2F, or passwordless). */
  async function allowedSetups(accountId: string): Promise<{ otp: boolean; passkey: boolean }> {
    const user = await findUser(deps.db, accountId);
    if (!user) return { otp: false, passkey: false };
    const policy = await deps.policies(LOGIN_POLICY, user.org_id);
    return {
      otp: policy.secondFactors.includes('SECOND_FACTOR_TYPE_OTP'),
      passkey: policy.secondFactors.includes('SECOND_FACTOR_TYPE_U2F') || policy.passwordlessType === 'PASSWORDLESS_TYPE_ALLOWED',
    };
  }

  /** The set-up a login owes (forceMfa or acr_values=mfa, and no factor yet): every allowed factor is offered. */
  async function beginForcedSetup(ctx: Context, loaded: Loaded, pending: PendingLogin, extra: Record<string, unknown> = {}): Promise<void> {
    const allowed = await allowedSetups(pending.accountId);
    if (!allowed.otp && !allowed.passkey) return render(ctx, messagePage(loaded.page.lang, loaded.page.t, loaded.page.t.noFactorAllowed), 403);
    await savePending(loaded, pending, extra);
    await showSetup(ctx, loaded, pending, allowed.otp ? await beginOtpSetup(deps.db, deps.factorKeys, pending.accountId) : undefined);
  }

  function pendingOf(ctx: Context, loaded: Loaded): PendingLogin | undefined {
    const pending = loaded.interaction.result?.[PENDING] as PendingLogin | undefined;
    if (!pending) render(ctx, messagePage(loaded.page.lang, loaded.page.t, loaded.page.t.sessionExpired), 400);
    return pending;
  }

  /** The set-up page: the authenticator app's key when `secret` (OTP allowed), and a passkey registration when allowed. */
  async function showSetup(ctx: Context, loaded: Loaded, pending: PendingLogin, secret: Buffer | undefined, error?: string): Promise<void> {
    const otp = secret ? await otpSetupOf(loaded, pending.loginName, secret) : undefined;
    const passkey = (await allowedSetups(pending.accountId)).passkey
      ? {
          ...(await registrationCeremony(deps.db, deps.challenges, rp, pending.accountId)),
          action: `${loaded.page.action}/passkey-setup`,
          csrf: loaded.page.csrf,
        }
      : undefined;
    render(
      ctx,
      secondFactorSetupPage({ ...loaded.page, confirm: `${loaded.page.action}/otp-setup`, cancel: `${loaded.page.action}?other=1` }, { otp, passkey, error }),
      error ? 400 : 200,
    );
  }

  async function otpSetupOf(loaded: Loaded, name: string, secret: Buffer): Promise<OtpSetup> {
    const uri = otpauthUri(secret, `Portcullis (${new URL(loaded.provider.issuer).host})`, name);
    return { qrSvg: await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }), secret: base32Encode(secret) };
  }

  // forceMfa or acr_values=mfa and no factor yet: the user sets up an app before the login finishes.
  router.post('/:uid/otp-setup', async (ctx) => {
    const loaded = await load(ctx);
    if (!checkCsrf(ctx, loaded)) return;
    const pending = pendingOf(ctx, loaded);
    if (!pending) return;
    if (!pending.setup || pending.verified) return render(ctx, messagePage(loaded.page.lang, loaded.page.t, loaded.page.t.sessionExpired), 400);
    const secret = await pendingOtpSecret(deps.db, deps.factorKeys, pending.accountId);
    if (!secret) return render(ctx, messagePage(loaded.page.lang, loaded.page.t, loaded.page.t.sessionExpired), 400);
    const code = text(form(ctx).code, 64).replace(/\s/g, '');
    if (!/^[0-9]{6}$/.test(code)) return showSetup(ctx, loaded, pending, secret, loaded.page.t.otpMalformed);
    const codes = await confirmOtpSetup(deps.db, deps.factorKeys, { userId: pending.accountId }, pending.accountId, code);
    if (!codes) return showSetup(ctx, loaded, pending, secret, loaded.page.t.otpWrong);
    await savePending(loaded, { ...pending, verified: true });
    render(ctx, recoveryCodesPage(loaded.page, codes, { action: `${loaded.page.action}/continue`, csrf: loaded.page.csrf }));
  });

  // The forced set-up's passkey: registered, it is the login's second factor.
  router.post('/:uid/passkey-setup', async (ctx) => {
    const loaded = await load(ctx);
    if (!checkCsrf(ctx, loaded)) return;
    const pending = pendingOf(ctx, loaded);
    if (!pending) return;
    if (!pending.setup || pending.verified || !(await allowedSetups(pending.accountId)).passkey)
      return render(ctx, messagePage(loaded.page.lang, loaded.page.t, loaded.page.t.sessionExpired), 400);
    const body = form(ctx);
    const name = text(body.name, 100).trim() || 'Passkey';
    const outcome = await completeRegistration(deps.db, deps.challenges, rp, pending.accountId, text(body.challengeId, 64), text(body.response, 16384), name);
    if (!outcome.ok) {
      const secret = await pendingOtpSecret(deps.db, deps.factorKeys, pending.accountId);
      return showSetup(ctx, loaded, pending, secret, passkeyError(loaded.page.t, outcome.reason));
    }
    loginSucceeded(ctx, pending.accountId);
    await finishLogin(ctx, loaded, pending.accountId, {}, PASSKEY_FACTOR_AMR);
  });

  router.post('/:uid/continue', async (ctx) => {
    const loaded = await load(ctx);
    if (!checkCsrf(ctx, loaded)) return;
    const pending = pendingOf(ctx, loaded);
    if (!pending) return;
    if (!pending.verified) return render(ctx, messagePage(loaded.page.lang, loaded.page.t, loaded.page.t.sessionExpired), 400);
    loginSucceeded(ctx, pending.accountId);
    await finishLogin(ctx, loaded, pending.accountId, {}, MFA_AMR);
  });

  // Passwordless: a discoverable credential, user verification required; no login name typed.
  router.post('/:uid/passkey', async (ctx) => {
    const loaded = await load(ctx);
    if (!checkCsrf(ctx, loaded)) return;
    const body = form(ctx);
    // The login page of this app offers no passkey then; a challenge from another app's page must not do it either.
    const notAllowed = () => loginNameView(ctx, loaded, { error: loaded.page.t.passkeyNotAllowed }, 403);
    if (!(await passwordlessAllowed(loaded.client?.org_id ?? ''))) return notAllowed();
    const outcome = await completeAuthentication(deps.db, deps.challenges, rp, text(body.challengeId, 64), text(body.response, 16384));
    if (!outcome.ok) {
      if (outcome.reason === 'rejected') await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
      return loginNameView(ctx, loaded, { error: passkeyError(loaded.page.t, outcome.reason) }, 400);
    }
    const user = await findUser(deps.db, outcome.value);
    if (user?.state !== 'active') return loginNameView(ctx, loaded, { error: loaded.page.t.accountLocked }, 400);
    if (!(await passwordlessAllowed(user.org_id))) return notAllowed();
    loginSucceeded(ctx, user.id);
    await finishLogin(ctx, loaded, user.id, {}, PASSKEY_AMR);
  });

  /** The login policy of this org (the app's, or the user's) allows a passkey alone to sign in. */
  async function passwordlessAllowed(orgId: string): Promise<boolean> {
    return (await deps.policies(LOGIN_POLICY, orgId)).passwordlessType === 'PASSWORDLESS_TYPE_ALLOWED';
  }

  router.post('/:uid/passkey-factor', async (ctx) => {
    const loaded = await load(ctx);
    if (!checkCsrf(ctx, loaded)) return;
    const pending = pendingOf(ctx, loaded);
    if (!pending) return;
    if (pending.setup) return render(ctx, messagePage(loaded.page.lang, loaded.page.t, loaded.page.t.sessionExpired), 400);
    const body = form(ctx);
    const outcome = await completeAuthentication(deps.db, deps.challenges, rp, text(body.challengeId, 64), text(body.response, 16384), pending.accountId);
    if (!outcome.ok) {
      if (outcome.reason === 'rejected') await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
      return secondFactorView(ctx, loaded, pending, passkeyError(loaded.page.t, outcome.reason));
    }
    const user = await findUser(deps.db, pending.accountId);
    if (user?.state !== 'active') return secondFactorView(ctx, loaded, pending, loaded.page.t.accountLocked);
    loginSucceeded(ctx, pending.accountId);
    await finishLogin(ctx, loaded, pending.accountId, {}, PASSKEY_FACTOR_AMR);
  });

  router.post('/:uid/otp', async (ctx) => {
    const loaded = await load(ctx);
    if (!checkCsrf(ctx, loaded)) return;
    const pending = pendingOf(ctx, loaded);
    if (!pending) return;
    if (pending.setup) return render(ctx, messagePage(loaded.page.lang, loaded.page.t, loaded.page.t.sessionExpired), 400);
    const outcome = await checkSecondFactor(deps.db, deps.factorKeys, pending.accountId, text(form(ctx).code, 64), () => deps.announce?.('users'));
    if (outcome.result !== 'ok') {
      // A malformed code is a typing slip, not a guess: it neither counts nor is logged as a failure.
      if (outcome.result !== 'malformed') {
        await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
        deps.log.info({ requestId: ctx.state.requestId, event: 'second_factor_failed', locked: outcome.result === 'locked' }, 'second factor failed');
        deps.onLogin?.('failure');
      }
      const t = loaded.page.t;
      const error = outcome.result === 'locked' ? t.accountLocked : outcome.result === 'malformed' ? t.otpMalformed : t.otpWrong;
      return secondFactorView(ctx, loaded, pending, error);
    }
    loginSucceeded(ctx, pending.accountId);
    await finishLogin(ctx, loaded, pending.accountId, {}, MFA_AMR);
  });

  function loginSucceeded(ctx: Context, accountId: string): void {
    deps.log.info({ requestId: ctx.state.requestId, event: 'login_succeeded', accountId }, 'login succeeded');
    deps.onLogin?.('success');
  }

  router.post('/:uid/select', async (ctx) => {
    const loaded = await load(ctx);
    if (!checkCsrf(ctx, loaded)) return;
    const accountId = text(form(ctx).accountId, 64);
    const choices = await accountChoices(ctx, loaded.provider);
    if (!choices.some((c) => c.accountId === accountId)) {
      return loginNameView(ctx, loaded, {});
    }
    await switchSession(ctx, loaded, accountId);
    await finish(ctx, loaded, { select_account: {} });
  });

  router.get('/:uid/register', async (ctx) => {
    await registrationForm(ctx, await load(ctx));
  });

  router.post('/:uid/register', async (ctx) => {
    const loaded = await load(ctx);
    if (!checkCsrf(ctx, loaded)) return;
    const body = form(ctx);
    const values: RegistrationValues = { givenName: text(body.givenName, 200), familyName: text(body.familyName, 200), email: text(body.email, 200).trim() };
    const password = text(body.password);
    const errors = registrationErrors(loaded.page, values, password, text(body.passwordRepeat));
    const orgId = loaded.client?.org_id;
    if (!orgId) return render(ctx, messagePage(loaded.page.lang, loaded.page.t, loaded.page.t.error), 400);
    if (!(await canRegister(loaded))) return render(ctx, messagePage(loaded.page.lang, loaded.page.t, loaded.page.t.registrationClosed), 403);
    if (Object.keys(errors).length) return render(ctx, registrationPage(loaded.page, { ...values, errors }, minPassword));
    if (registrationBlocked(ctx, loaded)) return;
    let userId: string;
    try {
      const human = parseHuman({
        userName: values.email,
        profile: { firstName: values.givenName, lastName: values.familyName },
        email: { email: values.email },
        password,
      });
      userId = await registerHuman(deps.db, deps.orgSettings, orgId, human);
    } catch (err) {
      if (err instanceof AlreadyExists) {
        await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
        return render(ctx, registrationPage(loaded.page, { ...values, errors: { email: loaded.page.t.accountExists } }, minPassword));
      }
      if (err instanceof InvalidArgument) return render(ctx, registrationPage(loaded.page, { ...values, errors: formErrors(loaded.page, err) }, minPassword));
      throw err;
    }
    if (await mfaRequired(loaded, userId)) {
      const user = await findUser(deps.db, userId);
      const pending = { accountId: userId, loginName: user ? loginName(user.user_name, user.primary_domain) : (values.email ?? ''), setup: true };
      return beginForcedSetup(ctx, loaded, pending, { create: {} });
    }
    await finishLogin(ctx, loaded, userId, { create: {} });
  });

  return router;

  /**
   * "This login name is not available" tells that an account exists, so it
   * counts as a failed authentication of the address (docs/security.md): an
   * address past the limit gets the 429 page instead of more answers.
   */
  function registrationBlocked(ctx: Context, loaded: Loaded): boolean {
    const wait = deps.throttle?.retryAfterOf(ctx.req);
    if (wait === undefined) return false;
    ctx.set('Retry-After', String(wait));
    render(ctx, messagePage(loaded.page.lang, loaded.page.t, translate(loaded.page.t, 'tooManyAttempts', { seconds: wait })), 429);
    return true;
  }

  function registrationErrors(page: PageContext, values: RegistrationValues, password: string, repeat: string): NonNullable<RegistrationValues['errors']> {
    const errors: NonNullable<RegistrationValues['errors']> = {};
    if (!values.givenName?.trim()) errors.givenName = page.t.fieldRequired;
    if (!values.familyName?.trim()) errors.familyName = page.t.fieldRequired;
    if (!values.email) errors.email = page.t.fieldRequired;
    else if (!LOOKS_LIKE_EMAIL.test(values.email)) errors.email = page.t.invalidEmail;
    if (!password) errors.password = page.t.fieldRequired;
    else if ([...password].length < minPassword) errors.password = translate(page.t, 'passwordTooShort', { min: minPassword });
    if (password !== repeat) errors.passwordRepeat = page.t.passwordsDiffer;
    return errors;
  }
}

/** Schema violations of the registration, shown beside the form fields they concern. */
function formErrors(page: PageContext, err: InvalidArgument): NonNullable<RegistrationValues['errors']> {
  const errors: NonNullable<RegistrationValues['errors']> = {};
  for (const v of err.violations) {
    if (v.field.startsWith('email') || v.field === 'userName') errors.email = page.t.invalidEmail;
    else if (v.field === 'profile.firstName') errors.givenName = v.description;
    else if (v.field === 'profile.lastName') errors.familyName = v.description;
    else if (v.field.endsWith('password')) errors.password = v.description;
  }
  return errors;
}

import type { Context } from 'koa';
import type { EffectivePolicy } from '../../src/domain/policies/kind.ts';
import { LOGIN_POLICY } from '../../src/domain/policies/login.ts';
import { findUser } from '../../src/storage/users.ts';
import { form, type InteractionKit, type Loaded, type PendingLogin, pendingOf, render, renderMessage, savePending } from '../context.ts';
import type { LoginEvents } from '../login-events.ts';
import { allowedFactors, type FactorEnv, factorById, type SecondFactor, type SetupView } from '../factors/index.ts';
import { recoveryCodesPage, secondFactorSetupPage } from '../views/second-factor.ts';

export interface FactorSetupStep {
  /** The set-up a login owes (forceMfa or acr_values=mfa, and no factor yet); `extra` joins the interaction's result. */
  begin(ctx: Context, loaded: Loaded, pending: PendingLogin, extra?: Record<string, unknown>): Promise<void>;
  /** The POST that confirms `factor`'s set-up: the login's second factor. */
  confirm(factor: SecondFactor): (ctx: Context) => Promise<void>;
  /** The POST of "send a new code" of a factor whose set-up is confirmed by a sent code. */
  resend(factor: SecondFactor): (ctx: Context) => Promise<void>;
  /** The POST after the recovery codes: the login finishes. */
  proceed(ctx: Context): Promise<void>;
}

/**
 * The forced set-up: one page offering every factor the login policy of
 * the user's org allows, each with its own form; the first one confirmed
 * is the login's second factor.
 */
export function factorSetupStep(kit: InteractionKit, env: FactorEnv, policies: EffectivePolicy, events: LoginEvents): FactorSetupStep {
  async function allowedFor(accountId: string): Promise<SecondFactor[]> {
    const user = await findUser(env.db, accountId);
    return user ? allowedFactors(await policies(LOGIN_POLICY, user.org_id)) : [];
  }

  /** The set-up page; `resume`: the set-ups already begun, after a refused answer. */
  async function show(
    ctx: Context,
    loaded: Loaded,
    pending: PendingLogin,
    factors: SecondFactor[],
    resume: boolean,
    error?: string,
    notice?: string,
  ): Promise<void> {
    const { page } = loaded;
    const view: SetupView = {};
    const user = { id: pending.accountId, loginName: pending.loginName };
    for (const factor of factors) {
      const part = await factor.setup(env, user, { action: `${page.action}/${factor.setupPath}`, csrf: page.csrf }, resume);
      Object.assign(view, part, { sent: [...(view.sent ?? []), ...(part.sent ?? [])] });
    }
    const c = { ...page, confirm: view.confirm, cancel: `${page.action}?other=1` };
    render(ctx, secondFactorSetupPage(c, { otp: view.otp, passkey: view.passkey, sent: view.sent, error, notice }), error ? 400 : 200);
  }

  async function begin(ctx: Context, loaded: Loaded, pending: PendingLogin, extra: Record<string, unknown> = {}): Promise<void> {
    const factors = await allowedFor(pending.accountId);
    if (!factors.length) return renderMessage(ctx, loaded, 'noFactorAllowed', 403);
    await savePending(loaded, pending, extra);
    await show(ctx, loaded, pending, factors, false);
  }

  const confirm = (factor: SecondFactor) => async (ctx: Context) => {
    const loaded = await kit.load(ctx);
    if (!kit.checkCsrf(ctx, loaded)) return;
    const pending = pendingOf(ctx, loaded);
    if (!pending) return;
    const factors = await allowedFor(pending.accountId);
    if (!pending.setup || pending.verified || !factors.includes(factor)) return renderMessage(ctx, loaded, 'sessionExpired', 400);
    const outcome = await factor.confirmSetup(env, pending.accountId, form(ctx), loaded.page.t);
    if (!outcome.ok) {
      if (!outcome.error) return renderMessage(ctx, loaded, 'sessionExpired', 400);
      return show(ctx, loaded, pending, factors, true, outcome.error);
    }
    if (outcome.recoveryCodes) {
      // The codes are shown once, before the login finishes.
      await savePending(loaded, { ...pending, verified: true, factor: factor.id });
      return render(ctx, recoveryCodesPage(loaded.page, outcome.recoveryCodes, { action: `${loaded.page.action}/continue`, csrf: loaded.page.csrf }));
    }
    events.succeeded(ctx, pending.accountId);
    await kit.finishLogin(ctx, loaded, pending.accountId, {}, factor.amr);
  };

  const resend = (factor: SecondFactor) => async (ctx: Context) => {
    const loaded = await kit.load(ctx);
    if (!kit.checkCsrf(ctx, loaded)) return;
    const pending = pendingOf(ctx, loaded);
    if (!pending) return;
    const factors = await allowedFor(pending.accountId);
    if (!pending.setup || pending.verified || !factors.includes(factor)) return renderMessage(ctx, loaded, 'sessionExpired', 400);
    await factor.resend?.(env, pending.accountId);
    return show(ctx, loaded, pending, factors, true, undefined, loaded.page.t.codeFactorSentAgain);
  };

  async function proceed(ctx: Context): Promise<void> {
    const loaded = await kit.load(ctx);
    if (!kit.checkCsrf(ctx, loaded)) return;
    const pending = pendingOf(ctx, loaded);
    if (!pending) return;
    const factor = pending.verified ? factorById(pending.factor) : undefined;
    if (!factor) return renderMessage(ctx, loaded, 'sessionExpired', 400);
    events.succeeded(ctx, pending.accountId);
    await kit.finishLogin(ctx, loaded, pending.accountId, {}, factor.amr);
  }

  return { begin, confirm, resend, proceed };
}

import type { Context } from 'koa';
import { findUser } from '../../src/storage/users.ts';
import { loginName } from '../../src/domain/users.ts';
import type { AuthThrottle } from '../../src/security/auth-throttle.ts';
import { form, type InteractionKit, type Loaded, type PendingLogin, pendingOf, render, renderMessage, savePending } from '../context.ts';
import type { LoginEvents } from '../login-events.ts';
import { type ChallengeView, type FactorEnv, heldFactors, type SecondFactor } from '../factors/index.ts';
import { otpPage } from '../views/second-factor.ts';
import type { PageContext } from '../views/parts.ts';
import { userMayAct } from '../../src/domain/may-act.ts';

/** The second-factor page of `userId`: each factor they hold shows its part (a code field, a passkey button), its form posting to `base/<its path>`. */
export async function secondFactorPage(
  env: FactorEnv,
  page: Pick<PageContext, 'lang' | 't' | 'csrf'>,
  user: { id: string; loginName: string },
  pathOf: (factor: SecondFactor) => string,
  error?: string,
  notice?: string,
): Promise<string> {
  const view: ChallengeView = {};
  for (const factor of await heldFactors(env, user.id)) {
    const part = await factor.challenge(env, user.id, { action: pathOf(factor), csrf: page.csrf });
    Object.assign(view, part, { sent: [...(view.sent ?? []), ...(part.sent ?? [])] });
  }
  return otpPage(page, view.otp?.action ?? '', { loginName: user.loginName, error, notice, otp: Boolean(view.otp), passkey: view.passkey, sent: view.sent });
}

export interface SecondFactorStep {
  /** Keeps the login pending and shows the second-factor page. */
  begin(ctx: Context, loaded: Loaded, pending: PendingLogin): Promise<void>;
  /**
   * A signed-in user whose session lacks the second factor now required
   * and who has one: the step for that user, the password being already
   * proven by the session. Without a factor it declines (false), and the
   * login starts over at the password: a browser left signed in is not
   * enough to set one up.
   */
  resume(ctx: Context, loaded: Loaded): Promise<boolean>;
  /** The POST of `factor`'s answer. */
  verify(factor: SecondFactor): (ctx: Context) => Promise<void>;
  /** The POST of "send a new code" of a factor whose code is sent. */
  resend(factor: SecondFactor): (ctx: Context) => Promise<void>;
}

export function secondFactorStep(kit: InteractionKit, env: FactorEnv, events: LoginEvents, throttle: AuthThrottle | undefined): SecondFactorStep {
  async function show(ctx: Context, loaded: Loaded, pending: PendingLogin, error?: string, notice?: string): Promise<void> {
    const user = { id: pending.accountId, loginName: pending.loginName };
    render(ctx, await secondFactorPage(env, loaded.page, user, (f) => `${loaded.page.action}/${f.verifyPath}`, error, notice));
  }

  async function begin(ctx: Context, loaded: Loaded, pending: PendingLogin): Promise<void> {
    await savePending(loaded, pending);
    await show(ctx, loaded, pending);
  }

  async function resume(ctx: Context, loaded: Loaded): Promise<boolean> {
    const accountId = loaded.interaction.session?.accountId;
    const user = accountId ? await findUser(env.db, accountId) : undefined;
    if (!userMayAct(user) || !(await heldFactors(env, user.id)).length) return false;
    await begin(ctx, loaded, { accountId: user.id, loginName: loginName(user.user_name, user.primary_domain) });
    return true;
  }

  const verify = (factor: SecondFactor) => async (ctx: Context) => {
    const loaded = await kit.load(ctx);
    if (!kit.checkCsrf(ctx, loaded)) return;
    const pending = pendingOf(ctx, loaded);
    if (!pending) return;
    if (pending.setup) return renderMessage(ctx, loaded, 'sessionExpired', 400);
    const outcome = await factor.verify(env, pending.accountId, form(ctx), loaded.page.t);
    if (!outcome.ok) {
      if (outcome.kind !== 'slip') await throttle?.failed(throttle.addressOf(ctx.req));
      if (outcome.kind === 'guess') events.failed(ctx, 'second_factor_failed', outcome.locked === true);
      return show(ctx, loaded, pending, outcome.error);
    }
    events.succeeded(ctx, pending.accountId);
    await kit.finishLogin(ctx, loaded, pending.accountId, {}, factor.amr);
  };

  const resend = (factor: SecondFactor) => async (ctx: Context) => {
    const loaded = await kit.load(ctx);
    if (!kit.checkCsrf(ctx, loaded)) return;
    const pending = pendingOf(ctx, loaded);
    if (!pending) return;
    if (pending.setup) return renderMessage(ctx, loaded, 'sessionExpired', 400);
    // Sent only for a factor the user holds; the page says the same either way.
    if ((await heldFactors(env, pending.accountId)).includes(factor)) await factor.resend?.(env, pending.accountId);
    await show(ctx, loaded, pending, undefined, loaded.page.t.codeFactorSentAgain);
  };

  return { begin, resume, verify, resend };
}

import type { Context } from 'koa';
import type { Database } from '../../src/storage/database.ts';
import type { ForcedMfa } from '../../src/engine/second-factor-rule.ts';
import type { AuthThrottle } from '../../src/security/auth-throttle.ts';
import { passwordLogin } from '../../src/commands/password-login.ts';
import { form, type InteractionKit, type Loaded, render, text, throttled } from '../context.ts';
import { afterFirstFactor, factorRequired } from '../flow.ts';
import type { LoginEvents } from '../login-events.ts';
import { heldFactors } from '../factors/index.ts';
import { passwordPage } from '../views/sign-in.ts';
import type { FactorSetupStep } from './factor-setup.ts';
import type { SecondFactorStep } from './second-factor.ts';
import type { AfterFirstFactorStep, MailVerificationStep } from './mail-verification.ts';

export interface PasswordDeps {
  db: Database;
  forcedMfa: ForcedMfa;
  events: LoginEvents;
  throttle?: AuthThrottle;
  /** Tells every node's caches that users changed (a login locked or unlocked one). */
  announce?: () => void;
  /** Links the identity a provider vouched for, if one waits (steps/external-idp.ts). */
  linkPending?: (ctx: Context, loaded: Loaded, userId: string) => Promise<void>;
}

/** What follows the first factor (docs/architecture.md): flow.ts decides, each step shows its page. */
export function afterPasswordStep(
  kit: InteractionKit,
  deps: PasswordDeps,
  next: { mailVerification: MailVerificationStep; secondFactor: SecondFactorStep; factorSetup: FactorSetupStep },
): AfterFirstFactorStep {
  return async (ctx, loaded, { accountId, loginName }) => {
    const step = await afterFirstFactor({
      emailUnverified: () => next.mailVerification.required(accountId),
      holdsFactor: (await heldFactors(deps, accountId)).length > 0,
      factorRequired: () => factorRequired(deps.forcedMfa, loaded.interaction, accountId),
    });
    if (step === 'mail-verification') return next.mailVerification.begin(ctx, loaded, { accountId, loginName });
    if (step === 'second-factor') return next.secondFactor.begin(ctx, loaded, { accountId, loginName });
    if (step === 'factor-setup') return next.factorSetup.begin(ctx, loaded, { accountId, loginName, setup: true });
    deps.events.succeeded(ctx, accountId);
    await kit.finishLogin(ctx, loaded, accountId);
  };
}

/** The password page's POST: the first factor, then what follows it. */
export function passwordStep(kit: InteractionKit, deps: PasswordDeps, proceed: AfterFirstFactorStep): (ctx: Context) => Promise<void> {
  return async (ctx) => {
    const loaded = await kit.load(ctx);
    if (!kit.checkCsrf(ctx, loaded)) return;
    if (throttled(ctx, loaded.page, deps.throttle)) return;
    const name = text(form(ctx).loginName, 500).trim();
    const password = text(form(ctx).password);
    const outcome = name && password ? await passwordLogin(deps.db, name, password, deps.announce) : { result: 'wrong' as const };
    if (outcome.result !== 'signed-in') {
      await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
      deps.events.failed(ctx, 'login_failed', outcome.result === 'locked');
      // While locked, the same answer whatever the password: no oracle.
      const error = outcome.result === 'locked' ? loaded.page.t.accountLocked : loaded.page.t.wrongCredentials;
      return render(ctx, passwordPage(loaded.page, { loginName: name, error }));
    }
    await deps.linkPending?.(ctx, loaded, outcome.userId);
    await proceed(ctx, loaded, { accountId: outcome.userId, loginName: name });
  };
}

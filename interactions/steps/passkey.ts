import type { Context } from 'koa';
import type { EffectivePolicy } from '../../src/domain/policies/kind.ts';
import { LOGIN_POLICY } from '../../src/domain/policies/login.ts';
import { findUser } from '../../src/storage/users.ts';
import { authenticationCeremony, completeAuthentication } from '../../src/commands/passkeys.ts';
import type { AuthThrottle } from '../../src/security/auth-throttle.ts';
import { form, type InteractionKit, type Loaded, type ShowLoginName } from '../context.ts';
import type { LoginEvents } from '../login-events.ts';
import type { FactorEnv } from '../factors/index.ts';
import { passkeyAnswer, passkeyError } from '../factors/passkey.ts';
import type { PasskeyCeremony } from '../views/parts.ts';
import { userMayAct } from '../../src/domain/may-act.ts';
import type { AfterFirstFactorStep, MailVerificationStep } from './mail-verification.ts';

/** A passkey alone: a hardware-secured key, unlocked by the user's verification (biometric or PIN). */
const PASSKEY_AMR = ['hwk', 'user'];

/** The login policy of this org (the app's, or the user's) allows a passkey alone to sign in. */
async function passwordlessAllowed(policies: EffectivePolicy, orgId: string): Promise<boolean> {
  return (await policies(LOGIN_POLICY, orgId)).passwordlessType === 'PASSWORDLESS_TYPE_ALLOWED';
}

/** "Sign in with a passkey" on the login-name page, when the login policy of the app's org (else the instance default) allows it. */
export async function passwordlessOffer(env: FactorEnv, policies: EffectivePolicy, loaded: Loaded): Promise<PasskeyCeremony | undefined> {
  if (!(await passwordlessAllowed(policies, loaded.client?.org_id ?? ''))) return undefined;
  return { ...(await authenticationCeremony(env.db, env.challenges, env.rp)), action: `${loaded.page.action}/passkey`, csrf: loaded.page.csrf };
}

/**
 * What follows a passkey alone: the email verification the login policy
 * asks for (requireEmailVerification holds whatever the first factor, as for
 * a password), then done; the passkey already proved two factors.
 */
export function afterPasskeyStep(kit: InteractionKit, events: LoginEvents, mailVerification: MailVerificationStep): AfterFirstFactorStep {
  return async (ctx, loaded, user) => {
    if (await mailVerification.required(user.accountId)) return mailVerification.begin(ctx, loaded, { ...user, passkey: true });
    events.succeeded(ctx, user.accountId);
    await kit.finishLogin(ctx, loaded, user.accountId, {}, PASSKEY_AMR);
  };
}

/** Passwordless: a discoverable credential, user verification required; no login name typed. */
export function passwordlessStep(
  kit: InteractionKit,
  env: FactorEnv,
  policies: EffectivePolicy,
  throttle: AuthThrottle | undefined,
  showLoginName: ShowLoginName,
  proceed: AfterFirstFactorStep,
): (ctx: Context) => Promise<void> {
  return async (ctx) => {
    const loaded = await kit.load(ctx);
    if (!kit.checkCsrf(ctx, loaded)) return;
    // The login page of this app offers no passkey then; a challenge from another app's page must not do it either.
    const notAllowed = () => showLoginName(ctx, loaded, { error: loaded.page.t.passkeyNotAllowed }, 403);
    if (!(await passwordlessAllowed(policies, loaded.client?.org_id ?? ''))) return notAllowed();
    const { challengeId, response } = passkeyAnswer(form(ctx));
    const outcome = await completeAuthentication(env.db, env.challenges, env.rp, challengeId, response);
    if (!outcome.ok) {
      if (outcome.reason === 'rejected') await throttle?.failed(throttle.addressOf(ctx.req));
      return showLoginName(ctx, loaded, { error: passkeyError(loaded.page.t, outcome.reason) }, 400);
    }
    const user = await findUser(env.db, outcome.value);
    if (!userMayAct(user)) return showLoginName(ctx, loaded, { error: loaded.page.t.accountLocked }, 400);
    if (!(await passwordlessAllowed(policies, user.org_id))) return notAllowed();
    await proceed(ctx, loaded, { accountId: user.id, loginName: user.user_name });
  };
}

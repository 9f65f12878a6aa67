import { findUser } from '../../src/storage/users.ts';
import {
  authenticationCeremony,
  completeAuthentication,
  completeRegistration,
  registrationCeremony,
  removeOwnPasskey,
  type PasskeyRefusal,
} from '../../src/commands/passkeys.ts';
import type { Messages } from '../../src/pages/i18n.ts';
import { text, type SecondFactor } from './second-factor.ts';
import { userMayAct } from '../../src/domain/may-act.ts';

/** The page's message for a refused passkey response. */
export function passkeyError(t: Messages, reason: PasskeyRefusal): string {
  return reason === 'malformed' ? t.passkeyMalformed : reason === 'challenge' ? t.passkeyExpired : t.passkeyFailed;
}

/** The posted WebAuthn response of a passkey form. */
export function passkeyAnswer(body: Record<string, unknown>): { challengeId: string; response: string } {
  return { challengeId: text(body.challengeId, 64), response: text(body.response, 16384) };
}

/** A passkey (WebAuthn) after the password: a hardware-secured key (RFC 8176 hwk). */
export const passkey: SecondFactor = {
  id: 'passkey',
  amr: ['pwd', 'hwk', 'mfa'],
  verifyPath: 'passkey-factor',
  setupPath: 'passkey-setup',
  held: (factors) => factors.passkey,
  // A passkey that may sign in alone may also follow a password.
  allowed: (policy) => policy.secondFactors.includes('SECOND_FACTOR_TYPE_U2F') || policy.passwordlessType === 'PASSWORDLESS_TYPE_ALLOWED',

  async challenge(env, userId, form) {
    return { passkey: { ...(await authenticationCeremony(env.db, env.challenges, env.rp, userId)), ...form } };
  },

  async verify(env, userId, body, t) {
    const { challengeId, response } = passkeyAnswer(body);
    const outcome = await completeAuthentication(env.db, env.challenges, env.rp, challengeId, response, userId);
    if (!outcome.ok) return { ok: false, error: passkeyError(t, outcome.reason), kind: outcome.reason === 'rejected' ? 'refused' : 'slip' };
    const user = await findUser(env.db, outcome.value);
    return userMayAct(user) ? { ok: true } : { ok: false, error: t.accountLocked, kind: 'slip' };
  },

  async setup(env, user, form) {
    return { passkey: { ...(await registrationCeremony(env.db, env.challenges, env.rp, user.id)), ...form } };
  },

  async confirmSetup(env, userId, body, t) {
    const { challengeId, response } = passkeyAnswer(body);
    const name = text(body.name, 100).trim() || 'Passkey';
    const outcome = await completeRegistration(env.db, env.challenges, env.rp, userId, challengeId, response, name);
    return outcome.ok ? { ok: true } : { ok: false, error: passkeyError(t, outcome.reason) };
  },

  async remove(env, userId, body) {
    await removeOwnPasskey(env.db, userId, text(body.passkeyId, 64));
  },
};

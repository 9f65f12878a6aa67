import { findUser } from '../../src/storage/users.ts';
import { checkFactorCode, confirmCodeFactor, type FactorCodeOutcome, removeOwnCodeFactor, sendFactorCode } from '../../src/commands/code-factors.ts';
import { type CodeChannel, channelVerified } from '../../src/domain/code-factors.ts';
import type { SECOND_FACTOR_TYPES } from '../../src/domain/policies/login.ts';
import type { Messages } from '../../src/pages/i18n.ts';
import type { SentCodeForm } from '../views/parts.ts';
import { type FactorEnv, type FactorForm, type Refusal, type SecondFactor, text } from './second-factor.ts';

interface Channel {
  id: 'otpEmail' | 'otpSms';
  channel: CodeChannel;
  policyType: (typeof SECOND_FACTOR_TYPES)[number];
  amr: readonly string[];
  path: string;
}

const deps = (env: FactorEnv) => ({ db: env.db, codes: env.codes, announce: env.announce ?? (() => {}) });

/** What the page says of a refused code, and how it counts: a wrong one is a guess (lockout, address), a spent one against the address only. */
function refusalOf(t: Messages, outcome: Exclude<FactorCodeOutcome, 'ok'>): Refusal {
  if (outcome === 'malformed') return { ok: false, error: t.codeFactorMalformed, kind: 'slip' };
  if (outcome === 'expired' || outcome === 'used') return { ok: false, error: t.codeFactorExpired, kind: 'refused' };
  return { ok: false, error: outcome === 'locked' ? t.accountLocked : t.otpWrong, kind: 'guess', locked: outcome === 'locked' };
}

/**
 * A code sent to the user as second factor (`OtpEmail` by mail, `OtpSms` by
 * SMS; docs/security.md, Second factors): sent when its form is shown (once
 * while a sent code is open), again on "send a new code".
 */
function codeByMessage(c: Channel): SecondFactor {
  /** The form of the code sent to the user's verified address or number; undefined when it is not verified. */
  async function sentForm(env: FactorEnv, userId: string, form: FactorForm): Promise<SentCodeForm | undefined> {
    const user = await findUser(env.db, userId);
    if (!user || !channelVerified(user, c.channel)) return undefined;
    await sendFactorCode(env, userId, c.channel, false);
    const sentTo = (c.channel === 'email' ? user.email : user.phone) ?? '';
    return { id: c.id, action: form.action, resend: `${form.action}/resend`, csrf: form.csrf, sentTo };
  }

  return {
    id: c.id,
    amr: c.amr,
    verifyPath: c.path,
    setupPath: `${c.path}-setup`,
    held: (factors) => factors[c.id],
    allowed: (policy) => policy.secondFactors.includes(c.policyType),

    async challenge(env, userId, form) {
      const sent = await sentForm(env, userId, form);
      return sent ? { sent: [sent] } : {};
    },

    async verify(env, userId, body, t) {
      const outcome = await checkFactorCode(deps(env), userId, c.channel, text(body.code, 64));
      return outcome === 'ok' ? { ok: true } : refusalOf(t, outcome);
    },

    async setup(env, user, form) {
      const sent = await sentForm(env, user.id, form);
      return sent ? { sent: [sent] } : {};
    },

    async confirmSetup(env, userId, body, t) {
      const outcome = await confirmCodeFactor(deps(env), userId, c.channel, text(body.code, 64));
      return outcome === 'ok' ? { ok: true } : { ok: false, error: refusalOf(t, outcome).error };
    },

    async remove(env, userId) {
      await removeOwnCodeFactor(env.db, userId, c.channel);
    },

    async resend(env, userId) {
      await sendFactorCode(env, userId, c.channel, true);
    },
  };
}

/** Codes by mail: one-time passwords (RFC 8176 `otp`). */
export const otpEmail = codeByMessage({
  id: 'otpEmail',
  channel: 'email',
  policyType: 'SECOND_FACTOR_TYPE_OTP_EMAIL',
  amr: ['pwd', 'otp', 'mfa'],
  path: 'otp-email',
});

/** Codes by SMS: RFC 8176 `sms`. */
export const otpSms = codeByMessage({
  id: 'otpSms',
  channel: 'sms',
  policyType: 'SECOND_FACTOR_TYPE_OTP_SMS',
  amr: ['pwd', 'sms', 'mfa'],
  path: 'otp-sms',
});

import QRCode from 'qrcode';
import { base32Encode, otpauthUri } from '../../src/domain/totp.ts';
import { beginOtpSetup, checkSecondFactor, confirmOtpSetup, pendingOtpSecret, removeOwnOtp } from '../../src/commands/otp.ts';
import type { OtpSetup } from '../views/parts.ts';
import { text, type FactorEnv, type SecondFactor } from './second-factor.ts';

async function setupOf(env: FactorEnv, loginName: string, secret: Buffer): Promise<OtpSetup> {
  const uri = otpauthUri(secret, `Portcullis (${new URL(env.issuer).host})`, loginName);
  return { qrSvg: await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }), secret: base32Encode(secret) };
}

/** An authenticator app (RFC 6238 TOTP), with its recovery codes. */
export const totp: SecondFactor = {
  id: 'otp',
  // RFC 8176: a recovery code is a one-time password too.
  amr: ['pwd', 'otp', 'mfa'],
  verifyPath: 'otp',
  setupPath: 'otp-setup',
  held: (factors) => factors.otp,
  allowed: (policy) => policy.secondFactors.includes('SECOND_FACTOR_TYPE_OTP'),

  async challenge(_env, _userId, form) {
    return { otp: form };
  },

  async verify(env, userId, body, t) {
    const outcome = await checkSecondFactor(env.db, env.keys, userId, text(body.code, 64), env.announce);
    if (outcome.result === 'ok') return { ok: true };
    // A malformed code is a typing slip, not a guess: it neither counts nor is logged as a failure.
    if (outcome.result === 'malformed') return { ok: false, error: t.otpMalformed, kind: 'slip' };
    return { ok: false, error: outcome.result === 'locked' ? t.accountLocked : t.otpWrong, kind: 'guess', locked: outcome.result === 'locked' };
  },

  async setup(env, user, form, resume) {
    const secret = resume ? await pendingOtpSecret(env.db, env.keys, user.id) : await beginOtpSetup(env.db, env.keys, user.id);
    return secret ? { otp: await setupOf(env, user.loginName, secret), confirm: form.action } : {};
  },

  async confirmSetup(env, userId, body, t) {
    if (!(await pendingOtpSecret(env.db, env.keys, userId))) return { ok: false };
    const code = text(body.code, 64).replace(/\s/g, '');
    if (!/^[0-9]{6}$/.test(code)) return { ok: false, error: t.otpMalformed };
    const recoveryCodes = await confirmOtpSetup(env.db, env.keys, { userId }, userId, code);
    return recoveryCodes ? { ok: true, recoveryCodes } : { ok: false, error: t.otpWrong };
  },

  async remove(env, userId) {
    await removeOwnOtp(env.db, userId);
  },
};

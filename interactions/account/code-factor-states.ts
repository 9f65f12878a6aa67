import { findUser } from '../../src/storage/users.ts';
import { LOGIN_POLICY } from '../../src/domain/policies/login.ts';
import { channelVerified } from '../../src/domain/code-factors.ts';
import { effectivePolicy } from '../../src/queries/policies.ts';
import type { FactorEnv, SecondFactor } from '../factors/index.ts';
import { otpEmail, otpSms } from '../factors/code-by-message.ts';
import type { CodeFactorState } from './pages.ts';

export const CODE_FACTORS = [otpEmail, otpSms] as const;

/**
 * What the security page shows of codes by mail and SMS: each one held, or
 * offered when the login policy of the user's org allows it and its address
 * or number is verified; and the user's phone number.
 */
export async function codeFactorStates(
  env: FactorEnv,
  userId: string,
  held: readonly SecondFactor[],
): Promise<{ codeFactors: CodeFactorState[]; phone?: { phone: string; verified: boolean } }> {
  const user = await findUser(env.db, userId);
  if (!user) return { codeFactors: [] };
  const policy = await effectivePolicy(env.db, LOGIN_POLICY, user.org_id);
  const codeFactors = CODE_FACTORS.flatMap((f): CodeFactorState[] => {
    if (held.includes(f)) return [{ id: f.id as CodeFactorState['id'], held: true }];
    return f.allowed(policy) && channelVerified(user, f.id === 'otpEmail' ? 'email' : 'sms') ? [{ id: f.id as CodeFactorState['id'], held: false }] : [];
  });
  return { codeFactors, ...(user.phone ? { phone: { phone: user.phone, verified: user.phone_verified === true } } : {}) };
}

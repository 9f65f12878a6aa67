import { findUser } from '../../src/storage/users.ts';
import { LOGIN_POLICY } from '../../src/domain/policies/login.ts';
import { channelVerified } from '../../src/domain/code-factors.ts';
import { effectivePolicy } from '../../src/queries/policies.ts';
import { codeFactorsOf } from '../../src/storage/code-factors.ts';
import type { FactorEnv } from '../factors/index.ts';
import { otpEmail, otpSms } from '../factors/code-by-message.ts';
import type { CodeFactorState } from './pages.ts';

export const CODE_FACTORS = [otpEmail, otpSms] as const;

const CHANNELS = { otpEmail: 'email', otpSms: 'sms' } as const;

/**
 * What the security page shows of codes by mail and SMS: each one set up
 * (removable even while its address or number waits for verification), or
 * offered when the login policy of the user's org allows it and its address
 * or number is verified; and the user's phone number.
 */
export async function codeFactorStates(
  env: FactorEnv,
  userId: string,
): Promise<{ codeFactors: CodeFactorState[]; phone?: { phone: string; verified: boolean } }> {
  const user = await findUser(env.db, userId);
  if (!user) return { codeFactors: [] };
  const policy = await effectivePolicy(env.db, LOGIN_POLICY, user.org_id);
  const setUp = await codeFactorsOf(env.db, user.id);
  const codeFactors = CODE_FACTORS.flatMap((f): CodeFactorState[] => {
    const id = f.id as CodeFactorState['id'];
    if (setUp.includes(CHANNELS[id])) return [{ id, held: true }];
    return f.allowed(policy) && channelVerified(user, CHANNELS[id]) ? [{ id, held: false }] : [];
  });
  return { codeFactors, ...(user.phone ? { phone: { phone: user.phone, verified: user.phone_verified === true } } : {}) };
}

import type { LoginPolicy } from '../../src/domain/policies/login.ts';
import { secondFactorsOf } from '../../src/storage/second-factors.ts';
import type { FactorEnv, SecondFactor } from './second-factor.ts';
import { totp } from './totp.ts';
import { passkey } from './passkey.ts';
import { otpEmail, otpSms } from './code-by-message.ts';

export type { ChallengeView, FactorEnv, FactorForm, SecondFactor, SetupView } from './second-factor.ts';

/** Every second factor, in the order the pages show them. A new factor is one more entry. */
export const SECOND_FACTORS: readonly SecondFactor[] = [totp, otpEmail, otpSms, passkey];

export function factorById(id: unknown): SecondFactor | undefined {
  return SECOND_FACTORS.find((f) => f.id === id);
}

/** The factors a user has, ready to use (one statement: every password login asks). */
export async function heldFactors(env: Pick<FactorEnv, 'db'>, userId: string): Promise<SecondFactor[]> {
  const held = await secondFactorsOf(env.db, userId);
  return SECOND_FACTORS.filter((f) => f.held(held));
}

/** The factors a login policy lets its users set up. */
export function allowedFactors(policy: LoginPolicy): SecondFactor[] {
  return SECOND_FACTORS.filter((f) => f.allowed(policy));
}

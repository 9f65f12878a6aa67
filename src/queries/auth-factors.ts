import type { Queryable } from '../storage/database.ts';
import type { Principal } from '../domain/roles.ts';
import { findOtp } from '../storage/otp.ts';
import { passkeysOf } from '../storage/passkeys.ts';
import { codeFactorsOf } from '../storage/code-factors.ts';
import { channelVerified } from '../domain/code-factors.ts';
import { managedUser } from './get-user.ts';

type FactorState = 'AUTH_FACTOR_STATE_READY' | 'AUTH_FACTOR_STATE_NOT_READY';
export type AuthFactorView =
  | { otp: Record<string, never>; state: FactorState }
  | { otpEmail: Record<string, never>; state: FactorState }
  | { otpSms: Record<string, never>; state: FactorState }
  | { u2f: { id: string; name: string }; state: FactorState };

/**
 * `GET /management/v1/users/{userId}/auth_factors` (docs/api/users.md): the
 * user's second factors (the app, codes by email and SMS, then the
 * passkeys); an app set-up not yet confirmed, or codes to an address or
 * number no longer verified, are NOT_READY.
 */
export async function listAuthFactors(db: Queryable, actor: Principal, orgId: string, userId: string): Promise<{ result: AuthFactorView[] }> {
  const user = await managedUser(db, actor, orgId, userId);
  const otp = await findOtp(db, user.id);
  const result: AuthFactorView[] = otp ? [{ otp: {}, state: otp.ready ? 'AUTH_FACTOR_STATE_READY' : 'AUTH_FACTOR_STATE_NOT_READY' }] : [];
  for (const channel of await codeFactorsOf(db, user.id)) {
    const state = channelVerified(user, channel) ? 'AUTH_FACTOR_STATE_READY' : 'AUTH_FACTOR_STATE_NOT_READY';
    result.push(channel === 'email' ? { otpEmail: {}, state } : { otpSms: {}, state });
  }
  for (const passkey of await passkeysOf(db, user.id)) result.push({ u2f: { id: passkey.id, name: passkey.name }, state: 'AUTH_FACTOR_STATE_READY' });
  return { result };
}

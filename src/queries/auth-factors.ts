import type { Queryable } from '../storage/database.ts';
import type { Principal } from '../domain/roles.ts';
import { findOtp } from '../storage/otp.ts';
import { managedUser } from './get-user.ts';

export type AuthFactorView = { otp: Record<string, never>; state: 'AUTH_FACTOR_STATE_READY' | 'AUTH_FACTOR_STATE_NOT_READY' };

/** `GET /management/v1/users/{userId}/auth_factors` (docs/api/users.md): the user's second factors; a set-up not yet confirmed is NOT_READY. */
export async function listAuthFactors(db: Queryable, actor: Principal, orgId: string, userId: string): Promise<{ result: AuthFactorView[] }> {
  const user = await managedUser(db, actor, orgId, userId);
  const otp = await findOtp(db, user.id);
  return { result: otp ? [{ otp: {}, state: otp.ready ? 'AUTH_FACTOR_STATE_READY' : 'AUTH_FACTOR_STATE_NOT_READY' }] : [] };
}

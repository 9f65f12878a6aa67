import type { PolicyKind } from './kind.ts';

/**
 * The lockout policy (ZITADEL's, plus a timed unlock): consecutive failed
 * password checks (and second-factor codes) a user may make before the
 * account locks, and for how long. 0 attempts: never lock; 0 seconds: locked
 * until an admin unlocks.
 */
export interface LockoutPolicy {
  maxPasswordAttempts: number;
  maxOtpAttempts: number;
  lockoutDurationSeconds: number;
}

const count = { type: 'integer', minimum: 0, maximum: 2147483647 };

export const LOCKOUT_POLICY: PolicyKind<LockoutPolicy> = {
  name: 'lockout',
  defaults: { maxPasswordAttempts: 10, maxOtpAttempts: 10, lockoutDurationSeconds: 900 },
  schema: {
    type: 'object',
    properties: { maxPasswordAttempts: count, maxOtpAttempts: count, lockoutDurationSeconds: count },
    additionalProperties: false,
  },
};

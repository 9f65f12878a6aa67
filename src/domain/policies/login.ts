import type { PolicyKind } from './kind.ts';

export const PASSWORDLESS_TYPES = ['PASSWORDLESS_TYPE_ALLOWED', 'PASSWORDLESS_TYPE_NOT_ALLOWED'] as const;
export const SECOND_FACTOR_TYPES = ['SECOND_FACTOR_TYPE_OTP', 'SECOND_FACTOR_TYPE_U2F', 'SECOND_FACTOR_TYPE_OTP_EMAIL', 'SECOND_FACTOR_TYPE_OTP_SMS'] as const;

/**
 * The login policy (ZITADEL's): whether users may register themselves, and
 * which second factors and passwordless sign-ins the login offers. It
 * applies per org: the user's once known, before that the org of the app
 * being signed in to.
 */
export interface LoginPolicy {
  forceMfa: boolean;
  passwordlessType: (typeof PASSWORDLESS_TYPES)[number];
  allowRegister: boolean;
  secondFactors: Array<(typeof SECOND_FACTOR_TYPES)[number]>;
  /** The login page offers the providers of the policy's list (docs/idps.md). */
  allowExternalIdp: boolean;
  /** forceMfa asks a second factor of local sign-ins only, not of sign-ins through a provider. */
  forceMfaLocalOnly: boolean;
  /** The login stops at the email verification page until the user's address is verified (Keycloak's "Verify email"). */
  requireEmailVerification: boolean;
}

export const LOGIN_POLICY: PolicyKind<LoginPolicy> = {
  name: 'login',
  defaults: {
    forceMfa: false,
    passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED',
    allowRegister: true,
    secondFactors: ['SECOND_FACTOR_TYPE_OTP', 'SECOND_FACTOR_TYPE_U2F'],
    allowExternalIdp: true,
    forceMfaLocalOnly: false,
    requireEmailVerification: false,
  },
  schema: {
    type: 'object',
    properties: {
      forceMfa: { type: 'boolean' },
      passwordlessType: { type: 'string', enum: [...PASSWORDLESS_TYPES] },
      allowRegister: { type: 'boolean' },
      secondFactors: { type: 'array', uniqueItems: true, maxItems: SECOND_FACTOR_TYPES.length, items: { type: 'string', enum: [...SECOND_FACTOR_TYPES] } },
      allowExternalIdp: { type: 'boolean' },
      forceMfaLocalOnly: { type: 'boolean' },
      requireEmailVerification: { type: 'boolean' },
    },
    additionalProperties: false,
  },
  problems: (policy) =>
    signInIsPossible(policy) ? [] : [{ field: 'secondFactors', description: 'forceMfa needs at least one second factor allowed, or passkeys allowed' }],
};

/**
 * With forceMfa every sign-in needs a second factor or a passkey: a policy
 * that allows neither locks every user of its org out, the admins who could
 * change it back included.
 */
function signInIsPossible(policy: LoginPolicy): boolean {
  return !policy.forceMfa || policy.secondFactors.length > 0 || policy.passwordlessType === 'PASSWORDLESS_TYPE_ALLOWED';
}

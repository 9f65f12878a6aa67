import type { PolicyKind } from './kind.ts';

/**
 * The password complexity policy (ZITADEL's): the minimum length and the
 * kinds of character a password must contain. Every place that sets a
 * password checks it (src/domain/password-policy.ts).
 */
export interface PasswordComplexityPolicy {
  minLength: number;
  hasUppercase: boolean;
  hasLowercase: boolean;
  hasNumber: boolean;
  hasSymbol: boolean;
}

/** Highest minLength an admin may ask for; the same bound as `PASSWORD_MIN_LENGTH`. */
export const MAX_MIN_LENGTH = 128;

/**
 * The kind with its built-in minimum length: `PASSWORD_MIN_LENGTH`, which
 * applies until an IAM owner sets the instance default.
 */
export function passwordComplexityKind(minLength: number): PolicyKind<PasswordComplexityPolicy> {
  return {
    name: 'password_complexity',
    defaults: { minLength, hasUppercase: false, hasLowercase: false, hasNumber: false, hasSymbol: false },
    schema: {
      type: 'object',
      properties: {
        minLength: { type: 'integer', minimum: 1, maximum: MAX_MIN_LENGTH },
        hasUppercase: { type: 'boolean' },
        hasLowercase: { type: 'boolean' },
        hasNumber: { type: 'boolean' },
        hasSymbol: { type: 'boolean' },
      },
      additionalProperties: false,
    },
  };
}

/** The kind with the documented default minimum of 8 characters. */
export const PASSWORD_COMPLEXITY_POLICY = passwordComplexityKind(8);

export interface PasswordPolicy {
  minLength: number;
}

// Hashing cost grows with input length; nobody types a longer password.
export const MAX_PASSWORD_LENGTH = 1024;

/** The reason a password breaks the policy, or undefined when it complies. */
export function passwordPolicyViolation(password: string, policy: PasswordPolicy): string | undefined {
  if ([...password].length < policy.minLength) return `must be at least ${policy.minLength} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  return undefined;
}

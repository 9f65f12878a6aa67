/**
 * The password complexity policy as every place that sets a password checks
 * it. The complexity flags are optional so a policy of only a length (the
 * built-in one of a first start) is one too.
 */
export interface PasswordPolicy {
  minLength: number;
  hasUppercase?: boolean;
  hasLowercase?: boolean;
  hasNumber?: boolean;
  hasSymbol?: boolean;
}

// Hashing cost grows with input length; nobody types a longer password.
export const MAX_PASSWORD_LENGTH = 1024;

/** A rule of the policy, as the API names it and the pages translate it. */
export type PasswordRule = 'minLength' | 'maxLength' | 'hasUppercase' | 'hasLowercase' | 'hasNumber' | 'hasSymbol';

// Letters and digits of any script count, as ZITADEL's and Keycloak's
// checks count them; a symbol is any other character, a space included.
const CLASSES: Array<{ rule: 'hasUppercase' | 'hasLowercase' | 'hasNumber' | 'hasSymbol'; pattern: RegExp; description: string }> = [
  { rule: 'hasUppercase', pattern: /\p{Lu}/u, description: 'must contain an uppercase letter' },
  { rule: 'hasLowercase', pattern: /\p{Ll}/u, description: 'must contain a lowercase letter' },
  { rule: 'hasNumber', pattern: /\p{Nd}/u, description: 'must contain a number' },
  { rule: 'hasSymbol', pattern: /[^\p{L}\p{N}]/u, description: 'must contain a symbol (a character that is neither a letter nor a digit)' },
];

/** Every rule of `policy` that `password` breaks, in the policy's order; empty when it complies. */
export function passwordRulesBroken(password: string, policy: PasswordPolicy): PasswordRule[] {
  const broken: PasswordRule[] = [];
  if ([...password].length < policy.minLength) broken.push('minLength');
  if (password.length > MAX_PASSWORD_LENGTH) broken.push('maxLength');
  for (const { rule, pattern } of CLASSES) if (policy[rule] && !pattern.test(password)) broken.push(rule);
  return broken;
}

/** The English text of a rule, as API errors name it. */
export function passwordRuleDescription(rule: PasswordRule, policy: PasswordPolicy): string {
  if (rule === 'minLength') return `must be at least ${policy.minLength} characters`;
  if (rule === 'maxLength') return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  return CLASSES.find((c) => c.rule === rule)!.description;
}

/** The reason a password breaks the policy (every broken rule, named), or undefined when it complies. */
export function passwordPolicyViolation(password: string, policy: PasswordPolicy): string | undefined {
  const broken = passwordRulesBroken(password, policy);
  if (!broken.length) return undefined;
  return broken.map((rule) => `${passwordRuleDescription(rule, policy)} (${rule})`).join('; ');
}

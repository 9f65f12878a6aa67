import { MAX_PASSWORD_LENGTH, passwordRulesBroken, type PasswordPolicy, type PasswordRule } from '../domain/password-policy.ts';
import { translate, type Messages } from './i18n.ts';

// The password complexity policy as the login pages tell it: each rule a
// new password breaks, in the page's language.

function ruleText(t: Messages, rule: PasswordRule, policy: PasswordPolicy): string {
  switch (rule) {
    case 'minLength':
      return translate(t, 'passwordTooShort', { min: policy.minLength });
    case 'maxLength':
      return translate(t, 'passwordTooLong', { max: MAX_PASSWORD_LENGTH });
    case 'hasUppercase':
      return t.passwordNeedsUppercase;
    case 'hasLowercase':
      return t.passwordNeedsLowercase;
    case 'hasNumber':
      return t.passwordNeedsNumber;
    case 'hasSymbol':
      return t.passwordNeedsSymbol;
  }
}

/** What is wrong with a new password, one sentence per broken rule; undefined when it complies. */
export function passwordPolicyText(t: Messages, password: string, policy: PasswordPolicy): string | undefined {
  const broken = passwordRulesBroken(password, policy);
  return broken.length ? broken.map((rule) => ruleText(t, rule, policy)).join(' ') : undefined;
}

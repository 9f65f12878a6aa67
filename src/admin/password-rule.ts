import { InvalidArgument } from '../domain/errors.ts';
import { passwordPolicyViolation, type PasswordPolicy } from '../domain/password-policy.ts';
import { invalidRequest } from './validate.ts';

/**
 * `parse(body)` with the password complexity policy as one more field rule,
 * so a 400 names a bad password together with the schema's bad fields. The
 * policy depends on the org, so it cannot be part of the compiled schema;
 * the command checks it again, for callers other than the API.
 */
export function parseWithPasswordRule<T>(parse: (body: unknown) => T, body: unknown, password: { policy: PasswordPolicy; field: string; value: unknown }): T {
  const broken = typeof password.value === 'string' ? passwordPolicyViolation(password.value, password.policy) : undefined;
  const own = broken ? [{ field: password.field, description: broken }] : [];
  let input: T;
  try {
    input = parse(body);
  } catch (err) {
    if (own.length && err instanceof InvalidArgument && !err.violations.some((v) => v.field === password.field))
      throw invalidRequest([...err.violations, ...own]);
    throw err;
  }
  if (own.length) throw invalidRequest(own);
  return input;
}

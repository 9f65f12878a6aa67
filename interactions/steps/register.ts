import type { Context } from 'koa';
import type { Database } from '../../src/storage/database.ts';
import type { EffectivePolicy } from '../../src/domain/policies/kind.ts';
import { LOGIN_POLICY } from '../../src/domain/policies/login.ts';
import { AlreadyExists, InvalidArgument } from '../../src/domain/errors.ts';
import { loginName } from '../../src/domain/users.ts';
import { findUser } from '../../src/storage/users.ts';
import type { ForcedMfa } from '../../src/engine/second-factor-rule.ts';
import type { AuthThrottle } from '../../src/security/auth-throttle.ts';
import { registerHuman } from '../../src/commands/register-human.ts';
import type { HumanInput, OrgSettings } from '../../src/commands/setup-org.ts';
import { validator } from '../../src/admin/validate.ts';
import { humanSchema } from '../../src/admin/schemas.ts';
import { profileOf } from '../../src/commands/external-login.ts';
import { passwordPolicyText } from '../../src/pages/password-rules.ts';
import type { PasswordPolicy } from '../../src/domain/password-policy.ts';
import { orgPasswordPolicy } from '../../src/queries/password-policy.ts';
import { form, type InteractionKit, type Loaded, pendingExternalOf, render, renderMessage, text, throttled } from '../context.ts';
import { factorRequired } from '../flow.ts';
import type { PageContext } from '../views/parts.ts';
import { type RegistrationValues, registrationPage } from '../views/registration.ts';
import type { FactorSetupStep } from './factor-setup.ts';
import type { MailVerificationStep } from './mail-verification.ts';
import type { CodeSettings } from '../../src/commands/verification-codes.ts';

const parseHuman = validator<HumanInput>(humanSchema);

// A first check so every field's error shows at once; the schema's email
// format decides after it.
const LOOKS_LIKE_EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

type FieldErrors = NonNullable<RegistrationValues['errors']>;

/**
 * Registration creates the user in the app's org, so it needs an app of
 * ours, and that org's login policy must allow it (allowRegister).
 */
export async function canRegister(policies: EffectivePolicy, loaded: Loaded): Promise<boolean> {
  const orgId = loaded.client?.org_id;
  if (!orgId) return false;
  // An identity from a provider whose isCreationAllowed says so may register (docs/idps.md).
  return pendingExternalOf(loaded)?.creationAllowed === true || (await policies(LOGIN_POLICY, orgId)).allowRegister;
}

/** The registration form's values from the identity a provider vouched for, if one waits. */
function prefilled(loaded: Loaded): RegistrationValues {
  const identity = pendingExternalOf(loaded)?.identity;
  if (!identity) return {};
  const profile = profileOf(identity);
  return {
    givenName: profile.firstName === '-' ? '' : profile.firstName,
    familyName: profile.lastName === '-' ? '' : profile.lastName,
    email: identity.email ?? '',
  };
}

export interface RegisterDeps {
  db: Database;
  /** Links the identity a provider vouched for, if one waits (steps/external-idp.ts). */
  linkPending?: (ctx: Context, loaded: Loaded, userId: string) => Promise<void>;
  orgSettings: OrgSettings;
  codes: CodeSettings;
  policies: EffectivePolicy;
  forcedMfa: ForcedMfa;
  throttle?: AuthThrottle;
}

export interface RegisterStep {
  /** The registration form, or a page saying registration is closed for this app. */
  show(ctx: Context, loaded: Loaded): Promise<void>;
  post(ctx: Context): Promise<void>;
}

export function registerStep(kit: InteractionKit, deps: RegisterDeps, factorSetup: FactorSetupStep, mailVerification: MailVerificationStep): RegisterStep {
  /** The password complexity policy of the org the user would join. */
  const passwordPolicyOf = (orgId: string) => orgPasswordPolicy(deps.db, deps.orgSettings.passwordComplexity, orgId);

  async function show(ctx: Context, loaded: Loaded): Promise<void> {
    const orgId = loaded.client?.org_id;
    if (!orgId || !(await canRegister(deps.policies, loaded))) return renderMessage(ctx, loaded, 'registrationClosed', 403);
    render(ctx, registrationPage(loaded.page, prefilled(loaded), (await passwordPolicyOf(orgId)).minLength));
  }

  function fieldErrors(page: PageContext, values: RegistrationValues, password: string, repeat: string, policy: PasswordPolicy): FieldErrors {
    const errors: FieldErrors = {};
    if (!values.givenName?.trim()) errors.givenName = page.t.fieldRequired;
    if (!values.familyName?.trim()) errors.familyName = page.t.fieldRequired;
    if (!values.email) errors.email = page.t.fieldRequired;
    else if (!LOOKS_LIKE_EMAIL.test(values.email)) errors.email = page.t.invalidEmail;
    if (!password) errors.password = page.t.fieldRequired;
    else {
      const broken = passwordPolicyText(page.t, password, policy);
      if (broken) errors.password = broken;
    }
    if (password !== repeat) errors.passwordRepeat = page.t.passwordsDiffer;
    return errors;
  }

  /** The new user's id, or undefined after showing the form again with its errors. */
  async function create(ctx: Context, loaded: Loaded, orgId: string, values: RegistrationValues, password: string): Promise<string | undefined> {
    const minPassword = (await passwordPolicyOf(orgId)).minLength;
    const again = (errors: FieldErrors) => render(ctx, registrationPage(loaded.page, { ...values, errors }, minPassword));
    try {
      const human = parseHuman({
        userName: values.email,
        profile: { firstName: values.givenName, lastName: values.familyName },
        email: { email: values.email },
        password,
      });
      return await registerHuman(deps.db, deps.orgSettings, deps.codes, orgId, human);
    } catch (err) {
      if (err instanceof AlreadyExists) {
        await deps.throttle?.failed(deps.throttle.addressOf(ctx.req));
        again({ email: loaded.page.t.accountExists });
        return undefined;
      }
      if (!(err instanceof InvalidArgument)) throw err;
      again(violationErrors(loaded.page, err));
      return undefined;
    }
  }

  async function post(ctx: Context): Promise<void> {
    const loaded = await kit.load(ctx);
    if (!kit.checkCsrf(ctx, loaded)) return;
    const body = form(ctx);
    const values: RegistrationValues = { givenName: text(body.givenName, 200), familyName: text(body.familyName, 200), email: text(body.email, 200).trim() };
    const password = text(body.password);
    const orgId = loaded.client?.org_id;
    if (!orgId) return renderMessage(ctx, loaded, 'error', 400);
    if (!(await canRegister(deps.policies, loaded))) return renderMessage(ctx, loaded, 'registrationClosed', 403);
    const policy = await passwordPolicyOf(orgId);
    const errors = fieldErrors(loaded.page, values, password, text(body.passwordRepeat), policy);
    if (Object.keys(errors).length) return render(ctx, registrationPage(loaded.page, { ...values, errors }, policy.minLength));
    // "This login name is not available" tells that an account exists, so it
    // counts as a failed authentication of the address (docs/security.md).
    if (throttled(ctx, loaded.page, deps.throttle)) return;
    const userId = await create(ctx, loaded, orgId, values, password);
    if (!userId) return;
    await deps.linkPending?.(ctx, loaded, userId);
    const user = await findUser(deps.db, userId);
    const name = user ? loginName(user.user_name, user.primary_domain) : (values.email ?? '');
    // The registration has just sent VerifyEmail: the page waits for its code.
    if (await mailVerification.required(userId)) return mailVerification.begin(ctx, loaded, { accountId: userId, loginName: name }, false, { create: {} });
    if (await factorRequired(deps.forcedMfa, loaded.interaction, userId)) {
      return factorSetup.begin(ctx, loaded, { accountId: userId, loginName: name, setup: true }, { create: {} });
    }
    await kit.finishLogin(ctx, loaded, userId, { create: {} });
  }

  return { show, post };
}

/** Schema violations of the registration, shown beside the form fields they concern. */
function violationErrors(page: PageContext, err: InvalidArgument): FieldErrors {
  const errors: FieldErrors = {};
  for (const v of err.violations) {
    if (v.field.startsWith('email') || v.field === 'userName') errors.email = page.t.invalidEmail;
    else if (v.field === 'profile.firstName') errors.givenName = v.description;
    else if (v.field === 'profile.lastName') errors.familyName = v.description;
    else if (v.field.endsWith('password')) errors.password = v.description;
  }
  return errors;
}

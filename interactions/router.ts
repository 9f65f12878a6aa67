import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import type { Database } from '../src/storage/database.ts';
import type { Announce } from '../src/storage/invalidation.ts';
import type { Logger } from '../src/logger.ts';
import type { EngineHolder } from '../src/engine/engine-holder.ts';
import type { AuthThrottle } from '../src/security/auth-throttle.ts';
import { INTERACTION_PATH } from '../src/engine/routes.ts';
import type { EffectivePolicy } from '../src/domain/policies/kind.ts';
import { Unavailable } from '../src/domain/errors.ts';
import type { FactorKeys } from '../src/commands/otp.ts';
import { relyingPartyOf } from '../src/commands/passkeys.ts';
import type { OrgSettings } from '../src/commands/setup-org.ts';
import type { CodeSettings } from '../src/commands/verification-codes.ts';
import type { ForcedMfa } from '../src/engine/second-factor-rule.ts';
import type { ChallengeStore } from '../src/security/challenges.ts';
import { CATALOGUES, chooseLanguage } from '../src/pages/i18n.ts';
import { RETRY_AFTER_SECONDS, StoreUnavailable } from '../src/storage/outage.ts';
import { messagePage, unavailablePage } from '../src/pages/messages.ts';
import { dropUnstorableFields } from './form-input.ts';
import { InteractionGone, interactionKit, render } from './context.ts';
import { entrySteps } from './flow.ts';
import { loginEvents } from './login-events.ts';
import { type FactorEnv, SECOND_FACTORS } from './factors/index.ts';
import { securityRoutes } from './account/security-page.ts';
import { consentStep } from './steps/consent.ts';
import { factorSetupStep } from './steps/factor-setup.ts';
import { loginNameStep } from './steps/login-name.ts';
import { afterPasskeyStep, passwordlessStep } from './steps/passkey.ts';
import { afterPasswordStep, passwordStep } from './steps/password.ts';
import { forgotPasswordStep, passwordCodeRoutes } from './steps/password-init.ts';
import { mailVerificationLinkRoutes, mailVerificationStep } from './steps/mail-verification.ts';
import { codePageKit } from './steps/code-page-kit.ts';
import { registerStep } from './steps/register.ts';
import { secondFactorStep } from './steps/second-factor.ts';
import { selectAccountStep } from './steps/select-account.ts';
import { CALLBACK_PATH, externalCallback, type ExternalIdpDeps, externalIdpStep, type ExternalIdpStep } from './steps/external-idp.ts';
import { ldapLoginStep, type LdapLoginStep } from './steps/ldap-login.ts';
import { samlLoginStep, type SamlLoginStep } from './steps/saml-login.ts';
import type { SamlLoginStates } from '../src/security/saml-login-states.ts';
import { SAML_RETURN } from '../src/saml/sp-routes.ts';

export interface InteractionDeps {
  engine: EngineHolder;
  db: Database;
  log: Logger;
  orgSettings: OrgSettings;
  csrfKey: Buffer;
  sessionLifetime: number;
  /** SameSite of the engine's session cookie (none while ENABLE_HTTP_POST_METHODS lets apps POST cross-site). */
  sessionSameSite: 'lax' | 'none';
  /** Told how each sign-in attempt ended (for /metrics). */
  onLogin?: (result: 'success' | 'failure') => void;
  /** Counts wrong passwords and unknown login names per client address. */
  throttle?: AuthThrottle;
  /** Tells every node's caches that users changed (a login locked or unlocked one). */
  announce?: Announce;
  /** Login policies, read through the per-node policy cache. */
  policies: EffectivePolicy;
  /** Whether the login policy forces a second factor on a user (forceMfa). */
  forcedMfa: ForcedMfa;
  /** Keys of second factors (sealed TOTP secrets, recovery code digests). */
  factorKeys: FactorKeys;
  /** Signs the cookie of the security page's own fresh sign-in. */
  securityKey: Buffer;
  /** Single-use WebAuthn challenges (engine-record storage). */
  challenges: ChallengeStore;
  /** WEBAUTHN_RP_ID; the issuer's host when unset. */
  webauthnRpId?: string;
  /** The key of the self-service codes' digests and the issuer their links point to. */
  codes: CodeSettings;
  /** Sign-ins through external identity providers (docs/idps.md). */
  external: Pick<ExternalIdpDeps, 'states' | 'sealingKey' | 'fetchFor' | 'upstreams' | 'ldapFor'> & { samlStates: SamlLoginStates };
}

/** Answers what the steps throw: the stores down, the instance busy, the interaction gone. */
const pageErrors: Middleware = async (ctx, next) => {
  try {
    await next();
  } catch (err) {
    const lang = chooseLanguage(undefined, ctx.get('accept-language'));
    const t = CATALOGUES[lang]!;
    if (err instanceof StoreUnavailable) {
      ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
      return render(ctx, unavailablePage(lang), 503);
    }
    if (err instanceof Unavailable) {
      ctx.set('Retry-After', String(err.retryAfter));
      return render(ctx, messagePage(lang, t, t.busy), 503);
    }
    if (!(err instanceof InteractionGone)) throw err;
    render(ctx, messagePage(lang, t, t.sessionExpired), 400);
  }
};

/**
 * The login UI (docs/oidc.md, Browser sign-in): the pages of the engine's
 * interactions, one step each (flow.ts decides which), and the self-service
 * security page. Every URL of the UI is here.
 */
export function interactionRoutes(deps: InteractionDeps): Router {
  // One spelling of each page: matched as written, so a path in another
  // letter case is not a page (it would skip this router's own middleware).
  const router = new Router({ prefix: INTERACTION_PATH, sensitive: true });
  router.use(pageErrors);
  router.use(
    bodyParser({
      enableTypes: ['form'],
      formLimit: '64kb',
      onError: () => {
        throw new InteractionGone();
      },
    }),
  );
  router.use(dropUnstorableFields);

  const kit = interactionKit(deps);
  const events = loginEvents(deps.log, deps.onLogin);
  const announce = () => deps.announce?.('users');
  const env: FactorEnv = {
    db: deps.db,
    keys: deps.factorKeys,
    challenges: deps.challenges,
    rp: relyingPartyOf(deps.engine.provider.issuer, deps.webauthnRpId),
    issuer: deps.engine.provider.issuer,
    codes: deps.codes,
    announce,
  };

  // The login-name page offers the providers; a provider's sign-in may lead back to it (to link an account).
  let external: ExternalIdpStep | undefined;
  const loginName = loginNameStep(kit, env, deps.policies, async (loaded) => (external ? external.offered(loaded) : []));
  const secondFactor = secondFactorStep(kit, env, events, deps.throttle);
  const factorSetup = factorSetupStep(kit, env, deps.policies, events);
  const selfService = { db: deps.db, codes: deps.codes, settings: deps.orgSettings, engine: deps.engine, announce };
  const mailVerification = mailVerificationStep(kit, { ...selfService, policies: deps.policies, throttle: deps.throttle });
  const afterPassword = afterPasswordStep(kit, { ...deps, events, announce }, { mailVerification, secondFactor, factorSetup });
  const linkPending: ExternalIdpStep['linkPending'] = (ctx, loaded, userId) => external!.linkPending(ctx, loaded, userId);
  const register = registerStep(kit, { ...deps, linkPending }, factorSetup, mailVerification);
  // The LDAP form is a provider's step that goes on like every provider's answer.
  let ldap: LdapLoginStep | undefined;
  let saml: SamlLoginStep | undefined;
  external = externalIdpStep(
    kit,
    { ...deps, ...deps.external, events, issuer: deps.engine.provider.issuer },
    {
      secondFactor,
      factorSetup,
      showLoginName: loginName.show,
      showRegistration: register.show,
      showLdapForm: (ctx, loaded, login) => ldap!.show(ctx, loaded, login),
      startSaml: (ctx, loaded, login) => saml!.start(ctx, loaded, login),
    },
  );
  ldap = ldapLoginStep(kit, { db: deps.db, events, announce, throttle: deps.throttle, ldapFor: deps.external.ldapFor }, external);
  saml = samlLoginStep(kit, { ...deps.external, issuer: deps.engine.provider.issuer }, external);
  const selectAccount = selectAccountStep(kit, deps.db, loginName.show);
  const consent = consentStep(kit);

  securityRoutes(router, {
    env,
    cookieKey: deps.securityKey,
    throttle: deps.throttle,
    engine: deps.engine,
    passwordComplexity: deps.orgSettings.passwordComplexity,
  });
  // The pages a mail's link opens, outside any login (docs/self-service.md).
  const codePages = codePageKit(deps.csrfKey, env.issuer.startsWith('https:'), deps.throttle);
  passwordCodeRoutes(router, codePages, selfService, 'init');
  passwordCodeRoutes(router, codePages, selfService, 'reset');
  mailVerificationLinkRoutes(router, codePages, selfService);

  router.get('/:uid', async (ctx) => {
    const loaded = await kit.load(ctx);
    const other = ctx.query.other !== undefined;
    for (const step of entrySteps(loaded.interaction, other)) {
      if (step === 'consent') return consent(ctx, loaded);
      if (step === 'register') return register.show(ctx, loaded);
      if (step === 'second-factor' && (await secondFactor.resume(ctx, loaded))) return;
      if (step === 'select-account' && (await selectAccount.enter(ctx, loaded))) return;
      if (step === 'login-name') return loginName.enter(ctx, loaded, other);
    }
  });
  router.post('/:uid/login-name', loginName.post);
  router.post('/:uid/password', passwordStep(kit, { ...deps, events, announce, linkPending }, afterPassword));
  router.post('/:uid/password/reset', forgotPasswordStep(kit, selfService));
  // A login held for its email goes on as its first factor would have.
  const afterPasskey = afterPasskeyStep(kit, events, mailVerification);
  router.post(
    '/:uid/mail/verification',
    mailVerification.post((ctx, loaded, user) => (user.passkey ? afterPasskey : afterPassword)(ctx, loaded, user)),
  );
  router.post('/:uid/mail/verification/resend', mailVerification.resend);
  router.post('/:uid/idp/:idpId', external.start);
  router.get('/:uid/idps/return', external.complete);
  router.post('/:uid/ldap/:idpId', ldap.post);
  router.get(`/:uid/${SAML_RETURN}`, saml.complete);
  router.post('/:uid/passkey', passwordlessStep(kit, env, deps.policies, deps.throttle, loginName.show, afterPasskey));
  for (const factor of SECOND_FACTORS) {
    router.post(`/:uid/${factor.verifyPath}`, secondFactor.verify(factor));
    router.post(`/:uid/${factor.setupPath}`, factorSetup.confirm(factor));
    if (factor.resend) {
      router.post(`/:uid/${factor.verifyPath}/resend`, secondFactor.resend(factor));
      router.post(`/:uid/${factor.setupPath}/resend`, factorSetup.resend(factor));
    }
  }
  router.post('/:uid/continue', factorSetup.proceed);
  router.post('/:uid/select', selectAccount.post);
  router.get('/:uid/register', async (ctx) => register.show(ctx, await kit.load(ctx)));
  router.post('/:uid/register', register.post);
  return router;
}

/** `{ISSUER}/idps/callback`, the redirect URI of every external provider (docs/idps.md): on to the interaction that left for it. */
export function externalCallbackRoutes(deps: Pick<InteractionDeps, 'external'>): Router {
  const router = new Router({ sensitive: true, strict: true });
  router.use(CALLBACK_PATH, pageErrors);
  router.get(CALLBACK_PATH, externalCallback(deps.external.states));
  return router;
}

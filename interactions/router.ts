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
import { passwordlessStep } from './steps/passkey.ts';
import { passwordStep } from './steps/password.ts';
import { registerStep } from './steps/register.ts';
import { secondFactorStep } from './steps/second-factor.ts';
import { selectAccountStep } from './steps/select-account.ts';

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
    announce,
  };

  const loginName = loginNameStep(kit, env, deps.policies);
  const secondFactor = secondFactorStep(kit, env, events, deps.throttle);
  const factorSetup = factorSetupStep(kit, env, deps.policies, events);
  const register = registerStep(kit, deps, factorSetup);
  const selectAccount = selectAccountStep(kit, deps.db, loginName.show);
  const consent = consentStep(kit);

  securityRoutes(router, {
    env,
    cookieKey: deps.securityKey,
    throttle: deps.throttle,
    engine: deps.engine,
    passwordComplexity: deps.orgSettings.passwordComplexity,
  });

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
  router.post('/:uid/password', passwordStep(kit, { ...deps, events, announce }, secondFactor, factorSetup));
  router.post('/:uid/passkey', passwordlessStep(kit, env, deps.policies, events, deps.throttle, loginName.show));
  for (const factor of SECOND_FACTORS) {
    router.post(`/:uid/${factor.verifyPath}`, secondFactor.verify(factor));
    router.post(`/:uid/${factor.setupPath}`, factorSetup.confirm(factor));
  }
  router.post('/:uid/continue', factorSetup.proceed);
  router.post('/:uid/select', selectAccount.post);
  router.get('/:uid/register', async (ctx) => register.show(ctx, await kit.load(ctx)));
  router.post('/:uid/register', register.post);
  return router;
}

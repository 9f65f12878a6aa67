import type { Context } from 'koa';
import type { Database } from '../../src/storage/database.ts';
import type { Logger } from '../../src/logger.ts';
import type { EffectivePolicy } from '../../src/domain/policies/kind.ts';
import { LOGIN_POLICY } from '../../src/domain/policies/login.ts';
import { loginName } from '../../src/domain/users.ts';
import type { ForcedMfa } from '../../src/engine/second-factor-rule.ts';
import type { OutboundFetch } from '../../src/outbound/client.ts';
import type { LdapDirectory } from '../../src/outbound/ldap.ts';
import { authorizationUrl, newLoginChecks, redeem, UpstreamError, type ExternalIdentity } from '../../src/outbound/upstream.ts';
import type { UpstreamCache } from '../../src/outbound/upstream-cache.ts';
import type { ExternalLoginStates } from '../../src/security/external-login-states.ts';
import { externalSignIn, linkExternal } from '../../src/commands/external-login.ts';
import { loginIdpOf, type LoginIdp } from '../../src/queries/idps.ts';
import { effectivePolicyIdps } from '../../src/queries/login-policy-idps.ts';
import { findIdp, type StoredIdp } from '../../src/storage/idps.ts';
import { findUser } from '../../src/storage/users.ts';
import { CATALOGUES, chooseLanguage, translate } from '../../src/pages/i18n.ts';
import { messagePage } from '../../src/pages/messages.ts';
import { INTERACTION_PATH } from '../../src/engine/routes.ts';
import { type InteractionKit, type Loaded, pendingExternalOf, render, savePendingExternal, type ShowLoginName } from '../context.ts';
import { afterFirstFactor, factorRequired } from '../flow.ts';
import { heldFactors } from '../factors/index.ts';
import type { LoginEvents } from '../login-events.ts';
import type { IdpButton } from '../views/external-idp.ts';
import type { FactorSetupStep } from './factor-setup.ts';
import type { SecondFactorStep } from './second-factor.ts';

/** The one redirect URI of every OIDC and OAuth provider (docs/idps.md). */
export const CALLBACK_PATH = '/idps/callback';

export interface ExternalIdpDeps {
  db: Database;
  log: Logger;
  policies: EffectivePolicy;
  forcedMfa: ForcedMfa;
  states: ExternalLoginStates;
  /** Unseals client secrets. */
  sealingKey: Buffer;
  /** The outbound client's fetch for a provider: instance-level ones may reach private addresses. */
  fetchFor(scope: { orgId: string | null }): OutboundFetch;
  /** Each provider's discovery document and JWKS between sign-ins. */
  upstreams: UpstreamCache;
  /** The directory client for an LDAP provider, under the same address rule. */
  ldapFor(scope: { orgId: string | null }): LdapDirectory;
  events: LoginEvents;
  issuer: string;
}

export interface ExternalIdpStep {
  /** The providers the login-name page shows: the login policy's list for the app's org, while allowExternalIdp. */
  offered(loaded: Loaded): Promise<IdpButton[]>;
  /** `POST /ui/login/{uid}/idp/{idpId}`: off to the upstream (an LDAP provider: its form). */
  start(ctx: Context): Promise<void>;
  /** The provider, when the app's login offers it. */
  loginIdp(loaded: Loaded, idpId: string): Promise<LoginIdp | undefined>;
  /** After the upstream vouched for `identity`: the linked user, an auto-created one, or creation and linking offered. */
  afterUpstream(ctx: Context, loaded: Loaded, idp: StoredIdp, identity: ExternalIdentity): Promise<void>;
  /** The page of an upstream that failed (down, slow, a check failed), logged with the reason. */
  failed(ctx: Context, loaded: Loaded, idpName: string, err: unknown): void;
  /** `GET /ui/login/{uid}/idps/return`: the upstream's answer, checked and redeemed. */
  complete(ctx: Context): Promise<void>;
  /** After the user's own sign-in (password step): links the identity the provider vouched for, if one waits. */
  linkPending(ctx: Context, loaded: Loaded, userId: string): Promise<void>;
}

/** The page of a failed trip to a provider: no session, nothing created (docs/idps.md). */
function failurePage(ctx: Context, lang: string, message: string, status: number): void {
  render(ctx, messagePage(lang, CATALOGUES[lang]!, message), status);
}

export function externalIdpStep(
  kit: InteractionKit,
  deps: ExternalIdpDeps,
  steps: {
    secondFactor: SecondFactorStep;
    factorSetup: FactorSetupStep;
    showLoginName: ShowLoginName;
    showRegistration(ctx: Context, loaded: Loaded): Promise<void>;
    /** An LDAP provider's own form of login name and password (steps/ldap-login.ts). */
    showLdapForm(ctx: Context, loaded: Loaded, login: LoginIdp): void;
    /** Off to a SAML provider with an AuthnRequest (steps/saml-login.ts). */
    startSaml(ctx: Context, loaded: Loaded, login: LoginIdp): Promise<void>;
  },
): ExternalIdpStep {
  const redirectUri = `${deps.issuer}${CALLBACK_PATH}`;
  const orgOf = (loaded: Loaded) => loaded.client?.org_id ?? null;

  async function offeredIdps(loaded: Loaded) {
    const orgId = orgOf(loaded);
    if (orgId && !(await deps.policies(LOGIN_POLICY, orgId)).allowExternalIdp) return [];
    return effectivePolicyIdps(deps.db, orgId);
  }

  async function offered(loaded: Loaded): Promise<IdpButton[]> {
    return (await offeredIdps(loaded)).map((idp) => ({ id: idp.idpId, name: idp.name, type: idp.type }));
  }

  /** The provider, when the app's login offers it. */
  async function loginIdp(loaded: Loaded, idpId: string): Promise<LoginIdp | undefined> {
    if (!(await offeredIdps(loaded)).some((idp) => idp.idpId === idpId)) return undefined;
    const idp = await findIdp(deps.db, idpId);
    return idp && loginIdpOf(deps.sealingKey, idp);
  }

  function failed(ctx: Context, loaded: Loaded, idpName: string, err: unknown): void {
    const reason = err instanceof UpstreamError ? err.reason : 'invalid';
    deps.log.warn(
      { requestId: ctx.state.requestId, event: 'external_login_failed', reason, error: err instanceof Error ? err.message : String(err) },
      'sign-in through an external provider failed',
    );
    deps.events.failed(ctx, 'login_failed', false);
    const t = loaded.page.t;
    failurePage(
      ctx,
      loaded.page.lang,
      translate(t, reason === 'unreachable' ? 'idpUnreachable' : 'idpFailed', { idp: idpName }),
      reason === 'unreachable' ? 502 : 400,
    );
  }

  async function start(ctx: Context): Promise<void> {
    const loaded = await kit.load(ctx);
    if (!kit.checkCsrf(ctx, loaded)) return;
    const login = await loginIdp(loaded, ctx.params.idpId ?? '');
    if (!login) return failurePage(ctx, loaded.page.lang, loaded.page.t.sessionExpired, 400);
    const { upstream } = login;
    if (upstream.protocol === 'ldap') return steps.showLdapForm(ctx, loaded, login);
    if (upstream.protocol === 'saml') return steps.startSaml(ctx, loaded, login);
    try {
      const config = await deps.upstreams.configuration(login.idp, upstream, login.secret, deps.fetchFor({ orgId: login.idp.orgId }));
      const checks = newLoginChecks();
      const url = await authorizationUrl(config, upstream, checks, redirectUri);
      await deps.states.put(checks.state, { uid: loaded.interaction.uid, idpId: login.idp.id, nonce: checks.nonce, codeVerifier: checks.codeVerifier });
      ctx.status = 303;
      ctx.redirect(url.href);
    } catch (err) {
      failed(ctx, loaded, login.idp.name, err);
    }
  }

  /** Signs the user in with the provider's `amr` (RFC 8176 `fed` first); forceMfa asks its factor unless forceMfaLocalOnly. */
  async function signIn(ctx: Context, loaded: Loaded, userId: string, identity: ExternalIdentity): Promise<void> {
    const amr = ['fed', ...identity.amr.filter((method) => method !== 'fed')];
    const user = await findUser(deps.db, userId);
    const name = user ? loginName(user.user_name, user.primary_domain) : '';
    const next = (await factorRequired(deps.forcedMfa, loaded.interaction, userId, amr))
      ? // The provider vouched for the identity: its sign-in does not stop at the email verification page.
        await afterFirstFactor({
          emailUnverified: async () => false,
          holdsFactor: (await heldFactors(deps, userId)).length > 0,
          factorRequired: async () => true,
        })
      : 'done';
    const pending = { accountId: userId, loginName: name, federated: amr };
    if (next === 'second-factor') return steps.secondFactor.begin(ctx, loaded, pending);
    if (next === 'factor-setup') return steps.factorSetup.begin(ctx, loaded, { ...pending, setup: true });
    deps.events.succeeded(ctx, userId);
    await kit.finishLogin(ctx, loaded, userId, {}, amr);
  }

  async function complete(ctx: Context): Promise<void> {
    const loaded = await kit.load(ctx);
    const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
    const trip = await deps.states.take(state);
    if (!trip || trip.uid !== loaded.interaction.uid) return failurePage(ctx, loaded.page.lang, loaded.page.t.sessionExpired, 400);
    const idp = await findIdp(deps.db, trip.idpId);
    const login = idp && loginIdpOf(deps.sealingKey, idp);
    if (!login || login.upstream.protocol === 'ldap' || login.upstream.protocol === 'saml')
      return failurePage(ctx, loaded.page.lang, loaded.page.t.sessionExpired, 400);
    let identity: ExternalIdentity;
    try {
      const fetch = deps.fetchFor({ orgId: login.idp.orgId });
      const config = await deps.upstreams.configuration(login.idp, login.upstream, login.secret, fetch);
      const answer = new URL(redirectUri);
      answer.search = ctx.querystring;
      const checks = { state, nonce: trip.nonce, codeVerifier: trip.codeVerifier };
      identity = await redeem(config, login.upstream, answer, checks, deps.upstreams.signatureCheck(login.idp, config, fetch));
    } catch (err) {
      return failed(ctx, loaded, login.idp.name, err);
    }
    await afterUpstream(ctx, loaded, login.idp, identity);
  }

  async function afterUpstream(ctx: Context, loaded: Loaded, idp: StoredIdp, identity: ExternalIdentity): Promise<void> {
    const outcome = await externalSignIn(deps.db, idp, identity, orgOf(loaded) ?? undefined);
    if (outcome.result === 'signed-in') return signIn(ctx, loaded, outcome.userId, identity);
    const t = loaded.page.t;
    if (outcome.result === 'refused') {
      deps.events.failed(ctx, 'login_failed', true);
      return failurePage(ctx, loaded.page.lang, t.idpRefused, 403);
    }
    const { isLinkingAllowed, isCreationAllowed } = idp.options;
    if (!isLinkingAllowed && !isCreationAllowed) return failurePage(ctx, loaded.page.lang, translate(t, 'idpNoAccount', { idp: idp.name }), 403);
    await savePendingExternal(loaded, { idpId: idp.id, idpName: idp.name, identity, creationAllowed: isCreationAllowed });
    if (!isLinkingAllowed) return steps.showRegistration(ctx, loaded);
    await steps.showLoginName(ctx, loaded, { notice: translate(t, 'idpLinkOffer', { idp: idp.name }) });
  }

  async function linkPending(ctx: Context, loaded: Loaded, userId: string): Promise<void> {
    const pending = pendingExternalOf(loaded);
    const idp = pending && (await findIdp(deps.db, pending.idpId));
    const user = await findUser(deps.db, userId);
    if (!pending || !idp || !user) return;
    if (!(await linkExternal(deps.db, { id: user.id, orgId: user.org_id }, idp, pending.identity))) {
      deps.log.info({ requestId: ctx.state.requestId, event: 'external_link_taken', idpId: idp.id }, 'the identity is linked to another user already');
    }
  }

  return { offered, start, loginIdp, afterUpstream, failed, complete, linkPending };
}

/**
 * `GET {ISSUER}/idps/callback`: the upstream's answer arrives here, outside
 * the interaction's cookie path; its `state` names the interaction, whose
 * own page redeems it (so the answer is tied to the browser that left).
 */
export function externalCallback(states: ExternalLoginStates): (ctx: Context) => Promise<void> {
  return async (ctx) => {
    const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
    const trip = await states.peek(state);
    if (!trip) {
      const lang = chooseLanguage(undefined, ctx.get('accept-language'));
      return failurePage(ctx, lang, CATALOGUES[lang]!.sessionExpired, 400);
    }
    ctx.status = 303;
    ctx.redirect(`${INTERACTION_PATH}/${encodeURIComponent(trip.uid)}/idps/return?${ctx.querystring}`);
  };
}

import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Context, Middleware } from 'koa';
import type { Adapter } from 'oidc-provider';
import type { Database } from '../storage/database.ts';
import { RETRY_AFTER_SECONDS, StoreUnavailable } from '../storage/outage.ts';
import type { EngineHolder } from '../engine/engine-holder.ts';
import type { SigningKey } from '../keys/signing-keys.ts';
import { SAML_PATHS } from '../domain/saml/engine-client.ts';
import { idpMetadataXml } from '../domain/saml/messages.ts';
import { SamlRefused } from '../domain/saml/xml.ts';
import { CATALOGUES, chooseLanguage } from '../pages/i18n.ts';
import { PAGE_HEADERS } from '../pages/layout.ts';
import { unavailablePage } from '../pages/messages.ts';
import { loggedOutPage, postFormPage, refusedPage, type PostedMessage } from '../pages/saml.ts';
import { readPost, readRedirect, type InboundMessage, type MessageField } from './bindings.ts';
import { samlRequestStore } from './request-store.ts';
import { idpKeys } from './idp-keys.ts';
import { startIdpInitiated, startSignIn } from './sso.ts';
import { finishSignIn } from './continue.ts';
import { singleLogout } from './slo.ts';
import { CHAIN_TTL_SECONDS, participantAnswered, type LogoutAnswer, type LogoutChain, type LogoutChainDeps } from './logout-chain.ts';
import { fanOutAtEndSession } from './end-session-fan-out.ts';
import { sessionParticipants } from './participants.ts';
import { singleUseRecords } from '../security/single-use-records.ts';
import type { EngineRule } from '../engine/rule-dispatch.ts';
import type { SamlResponseHooks } from '../commands/token-hooks.ts';

export interface SamlIdpDeps {
  db: Database;
  issuer: string;
  /** How long an idle browser session lives: what the IdP told each app of it is kept as long. */
  sessionLifetime: number;
  /** The instance's signing keys in signing order (the engine's). */
  signingKeys: () => SigningKey[];
  /** Engine-record stores for waiting requests, seen request ids, session participants and logouts under way. */
  adapter: (model: string) => Adapter;
  /** The presamlresponse hooks (docs/actions.md). */
  hooks?: SamlResponseHooks;
}

function page(ctx: Context, html: string, status = 200): void {
  ctx.status = status;
  ctx.type = 'html';
  ctx.set(PAGE_HEADERS);
  ctx.body = html;
}

const language = (ctx: Context) => chooseLanguage(undefined, ctx.get('accept-language'));

/** Refusals become the error page (never a response to an SP: the request may not be the SP's); outages the 503 page. */
const refusals: Middleware = async (ctx, next) => {
  try {
    await next();
  } catch (err) {
    const lang = language(ctx);
    if (err instanceof StoreUnavailable) {
      ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
      return page(ctx, unavailablePage(lang), 503);
    }
    if (!(err instanceof SamlRefused)) throw err;
    page(ctx, refusedPage(lang, CATALOGUES[lang]!, err.message), 400);
  }
};

const formBody = bodyParser({
  enableTypes: ['form'],
  // A signed AuthnRequest is a few kilobytes; base64 of the 64 KiB XML limit.
  formLimit: '96kb',
  onError: () => {
    throw new SamlRefused('the form could not be read (too large or malformed)');
  },
});

/** The message of either binding: the query of a GET, the form of a POST. */
function inbound(ctx: Context, field: MessageField): InboundMessage {
  return ctx.method === 'POST' ? readPost((ctx.request.body ?? {}) as Record<string, unknown>, field) : readRedirect(ctx.querystring, field);
}

export interface SamlIdp {
  /** The engine rule that logs the SAML apps of a session out after an OIDC logout (end_session_confirm). */
  logoutAtEndSession: EngineRule;
  routes(engine: EngineHolder): Router;
}

/**
 * The SAML 2.0 IdP (docs/saml.md): metadata, single sign-on and single
 * logout on both bindings, and the continuation the engine returns to.
 * Built before the engine, which takes its logout rule.
 */
export function samlIdentityProvider(deps: SamlIdpDeps): SamlIdp {
  const idpEntityId = `${deps.issuer}${SAML_PATHS.metadata}`;
  const keys = idpKeys(deps.signingKeys, new URL(deps.issuer).hostname);
  const store = samlRequestStore(deps.adapter('SamlRequest'), deps.adapter('SamlRequestId'));
  const participants = sessionParticipants(deps.adapter('SamlParticipant'), deps.sessionLifetime);
  const logout: LogoutChainDeps = {
    db: deps.db,
    store,
    keys,
    issuer: deps.issuer,
    idpEntityId,
    participants,
    chains: singleUseRecords<LogoutChain>(deps.adapter('SamlLogout'), CHAIN_TTL_SECONDS),
  };
  return { logoutAtEndSession: fanOutAtEndSession(logout), routes: (engine) => samlRouter(deps, engine, logout) };
}

function samlRouter(deps: SamlIdpDeps, engine: EngineHolder, logout: LogoutChainDeps): Router {
  const { keys, store, idpEntityId, participants } = logout;
  const provider = () => engine.provider;
  const post = (ctx: Context, message: PostedMessage) => {
    const lang = language(ctx);
    page(ctx, postFormPage(lang, CATALOGUES[lang]!, message));
  };

  const router = new Router({ sensitive: true, strict: true });
  router.use(SAML_PATHS.sso, refusals);
  router.use(SAML_PATHS.slo, refusals);
  router.use(SAML_PATHS.continue, refusals);
  router.use(SAML_PATHS.init, refusals);

  router.get(SAML_PATHS.metadata, (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.type = 'application/samlmetadata+xml';
    ctx.body = idpMetadataXml({ entityId: idpEntityId, sso: `${deps.issuer}${SAML_PATHS.sso}`, slo: `${deps.issuer}${SAML_PATHS.slo}` }, keys.certificates());
  });
  const sso = async (ctx: Context) => startSignIn(ctx, { db: deps.db, store, issuer: deps.issuer }, inbound(ctx, 'SAMLRequest'));
  router.get(SAML_PATHS.sso, sso);
  router.get(SAML_PATHS.init, async (ctx) => startIdpInitiated(ctx, { db: deps.db, store, issuer: deps.issuer }));
  router.post(SAML_PATHS.sso, formBody, sso);
  router.get(SAML_PATHS.continue, async (ctx) => {
    const continueDeps = { db: deps.db, store, provider, keys, issuer: deps.issuer, idpEntityId, participants, ...(deps.hooks ? { hooks: deps.hooks } : {}) };
    post(ctx, await finishSignIn(ctx, continueDeps));
  });
  const answer = (ctx: Context, result: LogoutAnswer) => {
    if ('redirect' in result) {
      ctx.status = 303;
      ctx.set('Cache-Control', 'no-store');
      return ctx.redirect(result.redirect);
    }
    if ('post' in result) return post(ctx, result.post);
    const lang = language(ctx);
    page(ctx, loggedOutPage(lang, CATALOGUES[lang]!));
  };
  // One endpoint takes both an SP's LogoutRequest and a participant's LogoutResponse (Bindings 3.4.3, 3.5.3).
  const slo = async (ctx: Context) => {
    const isResponse =
      ctx.method === 'POST' ? (ctx.request.body as Record<string, unknown> | undefined)?.SAMLResponse !== undefined : 'SAMLResponse' in ctx.query;
    if (isResponse) return answer(ctx, await participantAnswered(logout, inbound(ctx, 'SAMLResponse'), `${deps.issuer}${SAML_PATHS.slo}`));
    answer(ctx, await singleLogout({ ...logout, db: deps.db, provider }, inbound(ctx, 'SAMLRequest')));
  };
  router.get(SAML_PATHS.slo, slo);
  router.post(SAML_PATHS.slo, formBody, slo);
  return router;
}

import { createHash, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { ROUTES } from '../engine/routes.ts';
import { BINDINGS, type Endpoint } from '../domain/saml/metadata.ts';
import { NAMEID_FORMATS, parseAuthnRequest, type AuthnRequest } from '../domain/saml/requests.ts';
import { SAML_PATHS, samlClientId } from '../domain/saml/engine-client.ts';
import { SamlRefused } from '../domain/saml/xml.ts';
import { findSamlAppByEntityId, type SamlAppRow } from '../storage/saml-apps.ts';
import { acceptMessage, type AcceptDeps } from './accept-request.ts';
import { relay, type InboundMessage } from './bindings.ts';
import type { PendingSamlRequest } from './request-store.ts';

// Single sign-on (SAML 2.0 Profiles 4.1, Web Browser SSO): an accepted
// AuthnRequest waits in the store while the browser signs in through the
// engine's own authorization, as the app's engine client (docs/
// architecture.md, "A SAML sign-in"). The engine applies the session, the
// login steps, second factors and policies exactly as for an OIDC app, and
// sends the browser to the continuation endpoint with a code.

/**
 * The ACS the response goes to: the one the request names, when the
 * metadata has it with the HTTP-POST binding; else the default one.
 * Profiles 4.1.4.1: a URL or index not in the metadata is refused.
 */
export function chooseAcs(app: SamlAppRow, request: AuthnRequest): string {
  if (request.protocolBinding && request.protocolBinding !== BINDINGS.post) throw new SamlRefused('responses are sent with the HTTP-POST binding only');
  const posts = app.acs.filter((endpoint: Endpoint) => endpoint.binding === BINDINGS.post);
  if (request.acsUrl !== undefined) {
    if (!posts.some((endpoint) => endpoint.location === request.acsUrl))
      throw new SamlRefused('the AssertionConsumerServiceURL is not in the service provider’s metadata');
    return request.acsUrl;
  }
  if (request.acsIndex !== undefined) {
    const indexed = posts.find((endpoint) => endpoint.index === request.acsIndex);
    if (!indexed) throw new SamlRefused('the AssertionConsumerServiceIndex is not in the service provider’s metadata');
    return indexed.location;
  }
  return defaultAcs(app);
}

/** The ACS marked isDefault with the HTTP-POST binding, else the first such (the metadata has one: metadata.ts). */
function defaultAcs(app: SamlAppRow): string {
  const posts = app.acs.filter((endpoint: Endpoint) => endpoint.binding === BINDINGS.post);
  return (posts.find((endpoint) => endpoint.isDefault) ?? posts[0]!).location;
}

/** The user's email when the request asks for emailAddress; the persistent user id for any other format (transient included: docs/saml.md). */
function nameIdFormat(request: AuthnRequest): string {
  return request.nameIdFormat === NAMEID_FORMATS.email ? NAMEID_FORMATS.email : NAMEID_FORMATS.persistent;
}

/** Keeps the request waiting and sends the browser to the engine's authorization, as the app's engine client. */
async function toAuthorization(
  ctx: Context,
  deps: AcceptDeps & { issuer: string },
  pending: Omit<PendingSamlRequest, 'verifier'>,
  prompt?: 'none' | 'login',
): Promise<void> {
  const verifier = randomBytes(32).toString('base64url');
  const state = await deps.store.put({ ...pending, verifier });
  const params = new URLSearchParams({
    client_id: samlClientId(pending.appId),
    redirect_uri: `${deps.issuer}${SAML_PATHS.continue}`,
    response_type: 'code',
    scope: 'openid',
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  if (prompt) params.set('prompt', prompt);
  ctx.status = 303;
  ctx.set('Cache-Control', 'no-store');
  ctx.redirect(`${deps.issuer}${ROUTES.authorization}?${params}`);
}

/** Accepts the AuthnRequest and sends the browser to the engine's authorization. */
export async function startSignIn(ctx: Context, deps: AcceptDeps & { issuer: string }, inbound: InboundMessage): Promise<void> {
  const { request, app } = await acceptMessage(deps, inbound, parseAuthnRequest, `${deps.issuer}${SAML_PATHS.sso}`);
  const pending = {
    appId: app.id,
    requestId: request.id,
    acsUrl: chooseAcs(app, request),
    nameIdFormat: nameIdFormat(request),
    isPassive: request.isPassive,
    ...(inbound.relayState === undefined ? {} : { relayState: inbound.relayState }),
  };
  // Core 3.4.1: IsPassive wins over ForceAuthn; the engine's prompts say the same.
  await toAuthorization(ctx, deps, pending, request.isPassive ? 'none' : request.forceAuthn ? 'login' : undefined);
}

/** One query parameter, present at most once. */
function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw new SamlRefused(`${name} is repeated`);
  return values[0];
}

/**
 * IdP-initiated sign-in (SAML 2.0 Profiles 4.1.5, unsolicited responses):
 * `?sp={entityID}&RelayState=…` signs the browser in as an AuthnRequest
 * would, then POSTs a response answering no request to the SP's default
 * ACS. Only for apps that allow it (`allowIdpInitiated`, docs/saml.md).
 */
export async function startIdpInitiated(ctx: Context, deps: AcceptDeps & { issuer: string }): Promise<void> {
  const query = new URLSearchParams(ctx.querystring);
  const entityId = single(query, 'sp');
  if (!entityId || entityId.length > 1024) throw new SamlRefused('sp must name a service provider by its entityID');
  const relayState = relay(single(query, 'RelayState'));
  const app = await findSamlAppByEntityId(deps.db, entityId);
  if (!app) throw new SamlRefused('the issuer is not a known service provider');
  if (!app.allow_idp_initiated) throw new SamlRefused('this service provider does not accept IdP-initiated sign-in');
  await toAuthorization(ctx, deps, {
    appId: app.id,
    acsUrl: defaultAcs(app),
    nameIdFormat: NAMEID_FORMATS.persistent,
    isPassive: false,
    ...(relayState === undefined ? {} : { relayState }),
  });
}

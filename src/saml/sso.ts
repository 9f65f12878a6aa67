import { createHash, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { ROUTES } from '../engine/routes.ts';
import { BINDINGS, type Endpoint } from '../domain/saml/metadata.ts';
import { NAMEID_FORMATS, parseAuthnRequest, type AuthnRequest } from '../domain/saml/requests.ts';
import { SAML_PATHS, samlClientId } from '../domain/saml/engine-client.ts';
import { SamlRefused } from '../domain/saml/xml.ts';
import type { SamlAppRow } from '../storage/saml-apps.ts';
import { acceptRequest, type AcceptDeps } from './accept-request.ts';
import type { InboundMessage } from './bindings.ts';

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
  return (posts.find((endpoint) => endpoint.isDefault) ?? posts[0]!).location;
}

/** The user's email when the request asks for emailAddress; the persistent user id for any other format (transient included: docs/saml.md). */
function nameIdFormat(request: AuthnRequest): string {
  return request.nameIdFormat === NAMEID_FORMATS.email ? NAMEID_FORMATS.email : NAMEID_FORMATS.persistent;
}

/** Accepts the AuthnRequest and sends the browser to the engine's authorization. */
export async function startSignIn(ctx: Context, deps: AcceptDeps & { issuer: string }, inbound: InboundMessage): Promise<void> {
  const { request, app } = await acceptRequest(deps, inbound, parseAuthnRequest, `${deps.issuer}${SAML_PATHS.sso}`);
  const acsUrl = chooseAcs(app, request);
  const verifier = randomBytes(32).toString('base64url');
  const state = await deps.store.put({
    appId: app.id,
    requestId: request.id,
    acsUrl,
    nameIdFormat: nameIdFormat(request),
    verifier,
    isPassive: request.isPassive,
    ...(inbound.relayState === undefined ? {} : { relayState: inbound.relayState }),
  });
  const params = new URLSearchParams({
    client_id: samlClientId(app.id),
    redirect_uri: `${deps.issuer}${SAML_PATHS.continue}`,
    response_type: 'code',
    scope: 'openid',
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  // Core 3.4.1: IsPassive wins over ForceAuthn; the engine's prompts say the same.
  if (request.isPassive) params.set('prompt', 'none');
  else if (request.forceAuthn) params.set('prompt', 'login');
  ctx.status = 303;
  ctx.redirect(`${deps.issuer}${ROUTES.authorization}?${params}`);
}

import { deflateRawSync } from 'node:zlib';
import type Provider from 'oidc-provider';
import type { Database } from '../storage/database.ts';
import { endSessionNamedBySp } from '../commands/end-user-sessions.ts';
import { BINDINGS } from '../domain/saml/metadata.ts';
import { logoutResponseXml, STATUS } from '../domain/saml/messages.ts';
import { parseLogoutRequest } from '../domain/saml/requests.ts';
import { SAML_PATHS } from '../domain/saml/engine-client.ts';
import { ALGORITHMS, signElement, signRedirect } from '../security/saml-signatures.ts';
import type { PostedMessage } from '../pages/saml.ts';
import { acceptRequest, type AcceptDeps } from './accept-request.ts';
import type { InboundMessage } from './bindings.ts';
import type { IdpKeys } from './idp-keys.ts';

// Single logout (SAML 2.0 Profiles 4.4), started by a service provider:
// its LogoutRequest passes the same checks as an AuthnRequest; the browser
// sessions it names by SessionIndex (the engine session's uid, which the
// assertion carried) end as an OIDC logout would, when they are the named
// user's; the SP gets a signed LogoutResponse at its SingleLogoutService.
// Other SPs of the session are not called in turn (docs/saml.md).

export interface LogoutDeps extends AcceptDeps {
  db: Database;
  provider: () => Provider;
  keys: IdpKeys;
  issuer: string;
  idpEntityId: string;
}

export type LogoutAnswer = { redirect: string } | { post: PostedMessage } | { done: true };

export async function singleLogout(deps: LogoutDeps, inbound: InboundMessage): Promise<LogoutAnswer> {
  const { request, app } = await acceptRequest(deps, inbound, parseLogoutRequest, `${deps.issuer}${SAML_PATHS.slo}`);
  for (const uid of request.sessionIndexes) {
    if (/^[A-Za-z0-9_-]{1,64}$/.test(uid)) await endSessionNamedBySp(deps.db, deps.provider(), uid, request.nameId);
  }
  const endpoint = app.slo.find((e) => e.binding === BINDINGS.redirect) ?? app.slo.find((e) => e.binding === BINDINGS.post);
  if (!endpoint) return { done: true };
  const destination = endpoint.responseLocation ?? endpoint.location;
  const { xml, id } = logoutResponseXml(deps.idpEntityId, destination, request.id, STATUS.success);
  const relay = inbound.relayState === undefined ? {} : { relayState: inbound.relayState };
  if (endpoint.binding === BINDINGS.post) {
    const signed = signElement(xml, id, 'LogoutResponse', deps.keys.signer());
    return { post: { action: destination, field: 'SAMLResponse', value: Buffer.from(signed).toString('base64'), appName: app.name, ...relay } };
  }
  // Bindings 3.4.4.1: DEFLATE, base64, then the query signed as it is sent.
  const query = [
    `SAMLResponse=${encodeURIComponent(deflateRawSync(Buffer.from(xml, 'utf8')).toString('base64'))}`,
    ...(inbound.relayState === undefined ? [] : [`RelayState=${encodeURIComponent(inbound.relayState)}`]),
    `SigAlg=${encodeURIComponent(ALGORITHMS.rsaSha256)}`,
  ].join('&');
  const signature = signRedirect(query, deps.keys.signer());
  const separator = destination.includes('?') ? '&' : '?';
  return { redirect: `${destination}${separator}${query}&Signature=${encodeURIComponent(signature)}` };
}

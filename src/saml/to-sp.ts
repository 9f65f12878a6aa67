import { deflateRawSync } from 'node:zlib';
import { BINDINGS, type Endpoint } from '../domain/saml/metadata.ts';
import { ALGORITHMS, signElement, signRedirect } from '../security/saml-signatures.ts';
import type { PostedMessage } from '../pages/saml.ts';
import type { IdpKeys } from './idp-keys.ts';

// A signed message from the IdP to a service provider's logout endpoint,
// carried by the browser (SAML 2.0 Bindings): HTTP-Redirect when the SP's
// metadata offers it (3.4.4.1: DEFLATE, base64, the query signed as it is
// sent), else HTTP-POST (3.5.4: the XML signed, in an auto-submitted form).

export type BrowserTrip = { redirect: string } | { post: PostedMessage };

export interface OutgoingMessage {
  field: 'SAMLRequest' | 'SAMLResponse';
  xml: string;
  id: string;
  localName: 'LogoutRequest' | 'LogoutResponse';
  relayState?: string;
  appName: string;
}

/** The SP's SingleLogoutService the IdP uses: HTTP-Redirect first, then HTTP-POST; none if it has neither. */
export function logoutEndpoint(endpoints: Endpoint[]): Endpoint | undefined {
  return endpoints.find((e) => e.binding === BINDINGS.redirect) ?? endpoints.find((e) => e.binding === BINDINGS.post);
}

/** Where `message` goes at `endpoint`: a response to its ResponseLocation when it has one (Metadata 2.2.2). */
export function destinationOf(endpoint: Endpoint, field: OutgoingMessage['field']): string {
  return field === 'SAMLResponse' ? (endpoint.responseLocation ?? endpoint.location) : endpoint.location;
}

export function sendToSp(endpoint: Endpoint, message: OutgoingMessage, keys: IdpKeys): BrowserTrip {
  const destination = destinationOf(endpoint, message.field);
  const relay = message.relayState === undefined ? {} : { relayState: message.relayState };
  if (endpoint.binding === BINDINGS.post) {
    const signed = signElement(message.xml, message.id, message.localName, keys.signer());
    return { post: { action: destination, field: message.field, value: Buffer.from(signed).toString('base64'), appName: message.appName, ...relay } };
  }
  const query = [
    `${message.field}=${encodeURIComponent(deflateRawSync(Buffer.from(message.xml, 'utf8')).toString('base64'))}`,
    ...(message.relayState === undefined ? [] : [`RelayState=${encodeURIComponent(message.relayState)}`]),
    `SigAlg=${encodeURIComponent(ALGORITHMS.rsaSha256)}`,
  ].join('&');
  const signature = signRedirect(query, keys.signer());
  const separator = destination.includes('?') ? '&' : '?';
  return { redirect: `${destination}${separator}${query}&Signature=${encodeURIComponent(signature)}` };
}

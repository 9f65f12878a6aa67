import type { Queryable } from '../storage/database.ts';
import { findSamlAppByEntityId, type SamlAppRow } from '../storage/saml-apps.ts';
import { SamlRefused } from '../domain/saml/xml.ts';
import type { AuthnRequest, LogoutRequest, LogoutResponse } from '../domain/saml/requests.ts';
import { verifiedMessage, verifyRedirectSignature } from '../security/saml-signatures.ts';
import type { InboundMessage } from './bindings.ts';
import type { SamlRequestStore } from './request-store.ts';

// The checks every message from a service provider passes (its requests,
// and its LogoutResponses to the IdP's own LogoutRequests), in order
// (docs/saml.md, "What is refused"): a well-formed message under the strict
// rules, from an issuer that is a SAML app, signed as the app's metadata
// promises (and verified whenever it is signed at all), fresh, meant for
// this endpoint, and seen for the first time.

/** How old a request may be, and how far ahead of our clock. */
const MAX_AGE_SECONDS = 300;
const MAX_SKEW_SECONDS = 60;
/** Seen ids are kept past the age limit, so a request cannot outlive its replay record. */
const SEEN_SECONDS = MAX_AGE_SECONDS + MAX_SKEW_SECONDS + 60;

type SpMessage = AuthnRequest | LogoutRequest | LogoutResponse;

export interface AcceptDeps {
  db: Queryable;
  store: SamlRequestStore;
}

function checkSignature<T extends SpMessage>(inbound: InboundMessage, request: T, app: SamlAppRow, parse: (xml: string) => T): T {
  if (inbound.binding === 'redirect') {
    // Bindings 3.4.4.1: in this binding the signature is on the query; one left inside the XML is not checked by anyone.
    if (request.signed) throw new SamlRefused('a Redirect-binding message carries its signature in the query, not in the XML');
    if (!inbound.querySignature) {
      if (app.authn_requests_signed) throw new SamlRefused('the service provider signs its messages, and this one is not signed');
      return request;
    }
    const { octets, sigAlg, signature } = inbound.querySignature;
    if (!app.certificates.length || !verifyRedirectSignature(octets, sigAlg, signature, app.certificates))
      throw new SamlRefused('the signature does not verify with the service provider’s certificate');
    return request;
  }
  if (!request.signed) {
    if (app.authn_requests_signed) throw new SamlRefused('the service provider signs its messages, and this one is not signed');
    return request;
  }
  if (!app.certificates.length) throw new SamlRefused('the message is signed but the service provider’s metadata has no certificate');
  // Read again from the signed bytes alone: what is acted on is exactly what was signed.
  const signed = parse(verifiedMessage(inbound.xml, request.root, app.certificates));
  if (signed.id !== request.id || signed.issuer !== request.issuer) throw new SamlRefused('the signed message is not the message sent');
  return signed;
}

function checkFreshness(request: SpMessage, endpoint: string): void {
  const age = (Date.now() - request.issueInstant.getTime()) / 1000;
  if (age > MAX_AGE_SECONDS) throw new SamlRefused('the message has expired');
  if (age < -MAX_SKEW_SECONDS) throw new SamlRefused('the message was issued in the future');
  if (request.destination !== undefined && request.destination !== endpoint) throw new SamlRefused('the message is meant for another endpoint (Destination)');
}

/** The message and its app, or SamlRefused saying why not. */
export async function acceptMessage<T extends SpMessage>(
  deps: AcceptDeps,
  inbound: InboundMessage,
  parse: (xml: string) => T,
  endpoint: string,
): Promise<{ request: T; app: SamlAppRow }> {
  const parsed = parse(inbound.xml);
  const app = await findSamlAppByEntityId(deps.db, parsed.issuer);
  if (!app) throw new SamlRefused('the issuer is not a known service provider');
  const request = checkSignature(inbound, parsed, app, parse);
  checkFreshness(request, endpoint);
  if (!(await deps.store.firstSeen(app.id, request.id, SEEN_SECONDS))) throw new SamlRefused('this message was already used (replay)');
  return { request, app };
}

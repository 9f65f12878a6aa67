import { MESSAGE_LIMITS, SAML_NS, SamlRefused, isElement, onlyChild, parseStrictXml, textOf, children } from './xml.ts';

// The messages a service provider sends the IdP (SAML 2.0 Core,
// saml-core-2.0-os 3.4.1 AuthnRequest, 3.7.1 LogoutRequest, and 3.7.2 the
// LogoutResponse answering the IdP's own LogoutRequest), read from a
// document that passed the strict parse. Only what the IdP acts on is read,
// and only from direct children of the root: a second Issuer or NameID
// tucked in elsewhere is never looked at.

export const NAMEID_FORMATS = {
  persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  email: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  unspecified: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
} as const;

interface RequestBase {
  id: string;
  issuer: string;
  issueInstant: Date;
  destination?: string;
  /** The root element, for the signature check. */
  root: Element;
  /** An enveloped ds:Signature directly in the root (HTTP-POST binding). */
  signed: boolean;
}

export interface AuthnRequest extends RequestBase {
  kind: 'AuthnRequest';
  acsUrl?: string;
  acsIndex?: number;
  protocolBinding?: string;
  nameIdFormat?: string;
  forceAuthn: boolean;
  isPassive: boolean;
}

export interface LogoutRequest extends RequestBase {
  kind: 'LogoutRequest';
  nameId: string;
  sessionIndexes: string[];
}

export interface LogoutResponse extends RequestBase {
  kind: 'LogoutResponse';
  inResponseTo: string;
  /** The top-level status code, and the second-level one if any. */
  status: string;
  secondStatus?: string;
}

const ID_PATTERN = /^[A-Za-z_][\w.-]{0,255}$/;

function base(root: Element): RequestBase {
  const id = root.getAttribute('ID') ?? '';
  if (!ID_PATTERN.test(id)) throw new SamlRefused('the message has no valid ID');
  if (root.getAttribute('Version') !== '2.0') throw new SamlRefused('the message is not SAML 2.0');
  const instant = root.getAttribute('IssueInstant') ?? '';
  const issueInstant = new Date(instant);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(instant) || Number.isNaN(issueInstant.getTime()))
    throw new SamlRefused('the message has no valid IssueInstant (UTC)');
  const issuerElement = onlyChild(root, SAML_NS.assertion, 'Issuer');
  const issuer = issuerElement ? textOf(issuerElement) : '';
  if (!issuer) throw new SamlRefused('the message names no Issuer');
  const destination = root.getAttribute('Destination') ?? undefined;
  const signed = children(root, SAML_NS.dsig, 'Signature').length > 0;
  return { id, issuer, issueInstant, root, signed, ...(destination ? { destination } : {}) };
}

function flag(root: Element, name: string): boolean {
  const value = root.getAttribute(name);
  return value === 'true' || value === '1';
}

/** An AuthnRequest (SAML 2.0 Core 3.4.1), or SamlRefused. */
export function parseAuthnRequest(xml: string): AuthnRequest {
  const root = parseStrictXml(xml, MESSAGE_LIMITS);
  if (!isElement(root, SAML_NS.protocol, 'AuthnRequest')) throw new SamlRefused('not a samlp:AuthnRequest');
  const request: AuthnRequest = { kind: 'AuthnRequest', ...base(root), forceAuthn: flag(root, 'ForceAuthn'), isPassive: flag(root, 'IsPassive') };
  const acsUrl = root.getAttribute('AssertionConsumerServiceURL');
  if (acsUrl) request.acsUrl = acsUrl;
  const acsIndex = root.getAttribute('AssertionConsumerServiceIndex');
  if (acsIndex) {
    if (!/^\d{1,5}$/.test(acsIndex)) throw new SamlRefused('AssertionConsumerServiceIndex is not a number');
    request.acsIndex = Number(acsIndex);
  }
  const binding = root.getAttribute('ProtocolBinding');
  if (binding) request.protocolBinding = binding;
  const policy = onlyChild(root, SAML_NS.protocol, 'NameIDPolicy');
  const format = policy?.getAttribute('Format');
  if (format) request.nameIdFormat = format;
  return request;
}

/** A LogoutRequest (SAML 2.0 Core 3.7.1), or SamlRefused. */
export function parseLogoutRequest(xml: string): LogoutRequest {
  const root = parseStrictXml(xml, MESSAGE_LIMITS);
  if (!isElement(root, SAML_NS.protocol, 'LogoutRequest')) throw new SamlRefused('not a samlp:LogoutRequest');
  const nameIdElement = onlyChild(root, SAML_NS.assertion, 'NameID');
  const nameId = nameIdElement ? textOf(nameIdElement) : '';
  if (!nameId) throw new SamlRefused('the LogoutRequest names no NameID');
  const sessionIndexes = children(root, SAML_NS.protocol, 'SessionIndex').map(textOf);
  return { kind: 'LogoutRequest', ...base(root), nameId, sessionIndexes };
}

/** A LogoutResponse (SAML 2.0 Core 3.7.2), or SamlRefused. */
export function parseLogoutResponse(xml: string): LogoutResponse {
  const root = parseStrictXml(xml, MESSAGE_LIMITS);
  if (!isElement(root, SAML_NS.protocol, 'LogoutResponse')) throw new SamlRefused('not a samlp:LogoutResponse');
  const inResponseTo = root.getAttribute('InResponseTo') ?? '';
  if (!ID_PATTERN.test(inResponseTo)) throw new SamlRefused('the LogoutResponse answers no request (InResponseTo)');
  const statusElement = onlyChild(root, SAML_NS.protocol, 'Status');
  const code = statusElement && onlyChild(statusElement, SAML_NS.protocol, 'StatusCode');
  const status = code?.getAttribute('Value') ?? '';
  if (!status) throw new SamlRefused('the LogoutResponse has no status');
  const second = onlyChild(code!, SAML_NS.protocol, 'StatusCode')?.getAttribute('Value');
  return { kind: 'LogoutResponse', ...base(root), inResponseTo, status, ...(second ? { secondStatus: second } : {}) };
}

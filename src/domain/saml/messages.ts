import { randomBytes } from 'node:crypto';
import { BASIC_NAME_FORMAT, type HookAttribute } from '../token-hooks.ts';
import { BINDINGS } from './metadata.ts';
import { NAMEID_FORMATS } from './requests.ts';
import { SAML_NS, escapeXml as x } from './xml.ts';

// The XML the IdP writes (SAML 2.0 Core and Metadata): its metadata, the
// Response with its Assertion (signed afterwards, src/security/saml-signatures.ts),
// and the LogoutResponse.

export const STATUS = {
  success: 'urn:oasis:names:tc:SAML:2.0:status:Success',
  requester: 'urn:oasis:names:tc:SAML:2.0:status:Requester',
  responder: 'urn:oasis:names:tc:SAML:2.0:status:Responder',
  noPassive: 'urn:oasis:names:tc:SAML:2.0:status:NoPassive',
  partialLogout: 'urn:oasis:names:tc:SAML:2.0:status:PartialLogout',
} as const;

const PASSWORD_CONTEXT = 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport';
const MFA_CONTEXT = 'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract';

/** How long a response may be presented: SAML 2.0 Profiles 4.1.4.2 asks for a short window. */
export const ASSERTION_LIFETIME_SECONDS = 300;

/** An id for a message or assertion: an NCName (xs:ID), 160 random bits. */
export function messageId(): string {
  return `_${randomBytes(20).toString('hex')}`;
}

const instant = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

export interface IdpEndpoints {
  entityId: string;
  sso: string;
  slo: string;
}

/** The IdP's metadata (saml-metadata-2.0-os 2.4.3): its signing certificates (base64 DER), SSO and SLO on both bindings. */
export function idpMetadataXml(idp: IdpEndpoints, certificates: string[]): string {
  const keys = certificates
    .map(
      (cert) =>
        `<md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="${SAML_NS.dsig}"><ds:X509Data><ds:X509Certificate>${cert}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`,
    )
    .join('');
  const services = (element: string, location: string) =>
    [BINDINGS.redirect, BINDINGS.post].map((binding) => `<md:${element} Binding="${binding}" Location="${x(location)}"/>`).join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="${SAML_NS.metadata}" entityID="${x(idp.entityId)}"><md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="${SAML_NS.protocol}">${keys}${services('SingleLogoutService', idp.slo)}<md:NameIDFormat>${NAMEID_FORMATS.persistent}</md:NameIDFormat><md:NameIDFormat>${NAMEID_FORMATS.email}</md:NameIDFormat>${services('SingleSignOnService', idp.sso)}</md:IDPSSODescriptor></md:EntityDescriptor>`;
}

export interface Subject {
  nameId: string;
  nameIdFormat: string;
  /** The engine session's uid: the SessionIndex an SP names in its LogoutRequest. */
  sessionIndex: string;
  authTime: Date;
  /** A second factor was used (acr mfa). */
  mfa: boolean;
  attributes: Record<string, string[]>;
  /** Added by presamlresponse hooks (docs/actions.md), after the IdP's own. */
  hookAttributes?: HookAttribute[];
}

export interface ResponseTarget {
  idpEntityId: string;
  spEntityId: string;
  acsUrl: string;
  /** The request answered; none in an unsolicited response (IdP-initiated, Profiles 4.1.5). */
  inResponseTo?: string;
}

const inResponseTo = (target: ResponseTarget) => (target.inResponseTo === undefined ? '' : ` InResponseTo="${x(target.inResponseTo)}"`);

function attributeStatement(attributes: Record<string, string[]>, added: HookAttribute[]): string {
  const own = Object.entries(attributes).map(([name, values]) => ({ name, nameFormat: BASIC_NAME_FORMAT, values }));
  const entries = [...own, ...added].filter(({ values }) => values.length);
  if (!entries.length) return '';
  const rendered = entries
    .map(
      ({ name, nameFormat, values }) =>
        `<saml:Attribute Name="${x(name)}" NameFormat="${x(nameFormat)}">${values
          .map(
            (value) =>
              `<saml:AttributeValue xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="xs:string">${x(value)}</saml:AttributeValue>`,
          )
          .join('')}</saml:Attribute>`,
    )
    .join('');
  return `<saml:AttributeStatement>${rendered}</saml:AttributeStatement>`;
}

/**
 * A successful Response carrying one Assertion (SAML 2.0 Profiles 4.1.4.2:
 * bearer SubjectConfirmation with Recipient, NotOnOrAfter, InResponseTo;
 * AudienceRestriction naming the SP). Answers the XML and the assertion's
 * ID, which the signature references.
 */
export function successResponseXml(target: ResponseTarget, subject: Subject, now = new Date()): { xml: string; assertionId: string } {
  const responseId = messageId();
  const assertionId = messageId();
  const issued = instant(now);
  const notBefore = instant(new Date(now.getTime() - 60_000));
  const notOnOrAfter = instant(new Date(now.getTime() + ASSERTION_LIFETIME_SECONDS * 1000));
  const issuer = `<saml:Issuer>${x(target.idpEntityId)}</saml:Issuer>`;
  const context = subject.mfa ? MFA_CONTEXT : PASSWORD_CONTEXT;
  const assertion =
    `<saml:Assertion xmlns:saml="${SAML_NS.assertion}" ID="${assertionId}" Version="2.0" IssueInstant="${issued}">${issuer}` +
    `<saml:Subject><saml:NameID Format="${x(subject.nameIdFormat)}">${x(subject.nameId)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData${inResponseTo(target)} NotOnOrAfter="${notOnOrAfter}" Recipient="${x(target.acsUrl)}"/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${notBefore}" NotOnOrAfter="${notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${x(target.spEntityId)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${instant(subject.authTime)}" SessionIndex="${x(subject.sessionIndex)}"><saml:AuthnContext><saml:AuthnContextClassRef>${context}</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    `${attributeStatement(subject.attributes, subject.hookAttributes ?? [])}</saml:Assertion>`;
  const xml =
    `<samlp:Response xmlns:samlp="${SAML_NS.protocol}" xmlns:saml="${SAML_NS.assertion}" ID="${responseId}" Version="2.0" IssueInstant="${issued}" Destination="${x(target.acsUrl)}"${inResponseTo(target)}>` +
    `${issuer}<samlp:Status><samlp:StatusCode Value="${STATUS.success}"/></samlp:Status>${assertion}</samlp:Response>`;
  return { xml, assertionId };
}

/** A Response without assertion, saying why (SAML 2.0 Core 3.2.2.2): a passive request the IdP could not answer silently. */
export function failureResponseXml(target: ResponseTarget, status: string, second?: string, now = new Date()): string {
  const inner = second ? `<samlp:StatusCode Value="${second}"/>` : '';
  return (
    `<samlp:Response xmlns:samlp="${SAML_NS.protocol}" xmlns:saml="${SAML_NS.assertion}" ID="${messageId()}" Version="2.0" IssueInstant="${instant(now)}" Destination="${x(target.acsUrl)}"${inResponseTo(target)}>` +
    `<saml:Issuer>${x(target.idpEntityId)}</saml:Issuer><samlp:Status><samlp:StatusCode Value="${status}">${inner}</samlp:StatusCode></samlp:Status></samlp:Response>`
  );
}

/**
 * A LogoutResponse (SAML 2.0 Core 3.7.2); `second` is a second-level
 * status, such as PartialLogout under Responder when not every session
 * participant could be logged out.
 */
export function logoutResponseXml(
  idpEntityId: string,
  destination: string,
  inResponseTo: string,
  status: string,
  second?: string,
  now = new Date(),
): { xml: string; id: string } {
  const id = messageId();
  const inner = second ? `<samlp:StatusCode Value="${second}"/>` : '';
  const xml =
    `<samlp:LogoutResponse xmlns:samlp="${SAML_NS.protocol}" xmlns:saml="${SAML_NS.assertion}" ID="${id}" Version="2.0" IssueInstant="${instant(now)}" Destination="${x(destination)}" InResponseTo="${x(inResponseTo)}">` +
    `<saml:Issuer>${x(idpEntityId)}</saml:Issuer><samlp:Status><samlp:StatusCode Value="${status}">${inner}</samlp:StatusCode></samlp:Status></samlp:LogoutResponse>`;
  return { xml, id };
}

export interface LogoutTarget {
  nameId: string;
  nameIdFormat: string;
  /** The engine session's uid, the SessionIndex the SP's assertion carried. */
  sessionIndex: string;
}

/** A LogoutRequest the IdP sends a session participant (SAML 2.0 Core 3.7.1; Profiles 4.4.3.3). */
export function logoutRequestXml(idpEntityId: string, destination: string, target: LogoutTarget, now = new Date()): { xml: string; id: string } {
  const id = messageId();
  const xml =
    `<samlp:LogoutRequest xmlns:samlp="${SAML_NS.protocol}" xmlns:saml="${SAML_NS.assertion}" ID="${id}" Version="2.0" IssueInstant="${instant(now)}" Destination="${x(destination)}">` +
    `<saml:Issuer>${x(idpEntityId)}</saml:Issuer><saml:NameID Format="${x(target.nameIdFormat)}">${x(target.nameId)}</saml:NameID>` +
    `<samlp:SessionIndex>${x(target.sessionIndex)}</samlp:SessionIndex></samlp:LogoutRequest>`;
  return { xml, id };
}

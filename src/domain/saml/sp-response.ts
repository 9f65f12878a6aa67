import { verifiedMessage } from '../../security/saml-signatures.ts';
import { STATUS } from './messages.ts';
import { MESSAGE_LIMITS, SAML_NS, SamlRefused, children, isElement, onlyChild, parseStrictXml, textOf } from './xml.ts';

// The Response an external IdP posts to our ACS (SAML 2.0 Core 3.3.3,
// Profiles 4.1.4.2-4.1.4.5). The Response or its one Assertion must carry
// the IdP's signature; only the signed element is read, from the bytes the
// signature covers (src/security/saml-signatures.ts), so content wrapped
// around or beside it is never looked at. Encrypted assertions are not
// taken.

/** Clock difference tolerated on NotBefore and NotOnOrAfter. */
export const CLOCK_SKEW_SECONDS = 60;

export interface ResponseExpectations {
  /** The IdP's signing certificates (base64 DER). */
  certificates: string[];
  idpEntityId: string;
  /** Our entityID: the Audience. */
  entityId: string;
  /** Our ACS: the Destination and the Recipient. */
  acs: string;
  now?: Date;
}

export interface SamlAssertion {
  responseId: string;
  assertionId: string;
  /** The request this answers, as the signed part says (the SubjectConfirmationData's). */
  inResponseTo: string;
  nameId: string;
  nameIdFormat: string;
  attributes: Record<string, string[]>;
  /** Until when the assertion may be presented: its replay record is kept that long. */
  notOnOrAfter: Date;
}

/** An attribute's value, null when the element has none (xmldom answers '' for a missing one). */
const attribute = (element: Element, name: string): string | null => (element.hasAttribute(name) ? element.getAttribute(name) : null);

function time(value: string | null, what: string): Date | undefined {
  if (value === null) return undefined;
  const date = new Date(value);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(value) || Number.isNaN(date.getTime())) throw new SamlRefused(`${what} is not a UTC time`);
  return date;
}

function statusOf(response: Element): string {
  const status = onlyChild(response, SAML_NS.protocol, 'Status');
  const code = status && onlyChild(status, SAML_NS.protocol, 'StatusCode');
  return code?.getAttribute('Value') ?? '';
}

/** The one Assertion of `parent`; an EncryptedAssertion or none is refused. */
function oneAssertion(parent: Element): Element {
  if (children(parent, SAML_NS.assertion, 'EncryptedAssertion').length) throw new SamlRefused('encrypted assertions are not accepted');
  const assertions = children(parent, SAML_NS.assertion, 'Assertion');
  if (assertions.length !== 1) throw new SamlRefused('the response must carry exactly one assertion');
  return assertions[0]!;
}

const reparse = (signed: string) => parseStrictXml(signed, MESSAGE_LIMITS);

function attributesOf(assertion: Element): Record<string, string[]> {
  const attributes: Record<string, string[]> = {};
  for (const statement of children(assertion, SAML_NS.assertion, 'AttributeStatement')) {
    for (const attribute of children(statement, SAML_NS.assertion, 'Attribute')) {
      const name = attribute.getAttribute('Name') ?? '';
      if (!name) continue;
      const values = children(attribute, SAML_NS.assertion, 'AttributeValue').flatMap((value) => {
        try {
          return [textOf(value)];
        } catch {
          return [];
        }
      });
      attributes[name] = [...(attributes[name] ?? []), ...values];
    }
  }
  return attributes;
}

/** The bearer confirmation addressed to our ACS, unexpired; its InResponseTo. */
function confirmation(subject: Element, expected: ResponseExpectations, now: number): { inResponseTo: string; notOnOrAfter: Date } {
  for (const element of children(subject, SAML_NS.assertion, 'SubjectConfirmation')) {
    if (element.getAttribute('Method') !== 'urn:oasis:names:tc:SAML:2.0:cm:bearer') continue;
    const data = onlyChild(element, SAML_NS.assertion, 'SubjectConfirmationData');
    if (!data) continue;
    if (data.getAttribute('Recipient') !== expected.acs) throw new SamlRefused('the assertion’s Recipient is not this service’s ACS');
    const notOnOrAfter = time(attribute(data, 'NotOnOrAfter'), 'SubjectConfirmationData NotOnOrAfter');
    if (!notOnOrAfter || notOnOrAfter.getTime() <= now - CLOCK_SKEW_SECONDS * 1000) throw new SamlRefused('the assertion has expired');
    const notBefore = time(attribute(data, 'NotBefore'), 'SubjectConfirmationData NotBefore');
    if (notBefore && notBefore.getTime() > now + CLOCK_SKEW_SECONDS * 1000) throw new SamlRefused('the assertion is not valid yet');
    return { inResponseTo: data.getAttribute('InResponseTo') ?? '', notOnOrAfter };
  }
  throw new SamlRefused('the assertion has no bearer confirmation');
}

function conditions(assertion: Element, expected: ResponseExpectations, now: number): Date | undefined {
  const element = onlyChild(assertion, SAML_NS.assertion, 'Conditions');
  if (!element) throw new SamlRefused('the assertion has no Conditions');
  const notBefore = time(attribute(element, 'NotBefore'), 'Conditions NotBefore');
  const notOnOrAfter = time(attribute(element, 'NotOnOrAfter'), 'Conditions NotOnOrAfter');
  if (notBefore && notBefore.getTime() > now + CLOCK_SKEW_SECONDS * 1000) throw new SamlRefused('the assertion is not valid yet');
  if (notOnOrAfter && notOnOrAfter.getTime() <= now - CLOCK_SKEW_SECONDS * 1000) throw new SamlRefused('the assertion has expired');
  const restrictions = children(element, SAML_NS.assertion, 'AudienceRestriction');
  if (!restrictions.length) throw new SamlRefused('the assertion names no audience');
  // Core 2.5.1.4: every AudienceRestriction must name us.
  for (const restriction of restrictions) {
    const audiences = children(restriction, SAML_NS.assertion, 'Audience').map(textOf);
    if (!audiences.includes(expected.entityId)) throw new SamlRefused('the assertion is meant for another audience');
  }
  return notOnOrAfter;
}

function checkIssuer(element: Element, expected: ResponseExpectations, required: boolean): void {
  const issuer = onlyChild(element, SAML_NS.assertion, 'Issuer');
  if (!issuer) {
    if (required) throw new SamlRefused('the assertion has no Issuer');
    return;
  }
  if (textOf(issuer) !== expected.idpEntityId) throw new SamlRefused('the issuer is not the identity provider of the metadata');
}

/** The assertion of a Response (base64-decoded XML), every check above passed; SamlRefused otherwise. */
export function readSamlResponse(xml: string, expected: ResponseExpectations): SamlAssertion {
  const now = (expected.now ?? new Date()).getTime();
  const outer = parseStrictXml(xml, MESSAGE_LIMITS);
  if (!isElement(outer, SAML_NS.protocol, 'Response')) throw new SamlRefused('the message is not a SAML Response');
  if (statusOf(outer) !== STATUS.success) throw new SamlRefused('the identity provider did not sign the user in');
  const responseSigned = children(outer, SAML_NS.dsig, 'Signature').length > 0;
  const response = responseSigned ? reparse(verifiedMessage(xml, outer, expected.certificates)) : outer;
  const destination = attribute(response, 'Destination');
  if (destination !== null && destination !== expected.acs) throw new SamlRefused('the response’s Destination is not this service’s ACS');
  if (responseSigned && destination === null) throw new SamlRefused('a signed response must name its Destination');
  let assertion = oneAssertion(response);
  if (!responseSigned) {
    if (!children(assertion, SAML_NS.dsig, 'Signature').length) throw new SamlRefused('neither the response nor the assertion is signed');
    assertion = reparse(verifiedMessage(xml, assertion, expected.certificates));
  }
  checkIssuer(response, expected, false);
  checkIssuer(assertion, expected, true);
  const subject = onlyChild(assertion, SAML_NS.assertion, 'Subject');
  const nameIdElement = subject && onlyChild(subject, SAML_NS.assertion, 'NameID');
  if (!subject || !nameIdElement) throw new SamlRefused('the assertion names no subject');
  const nameId = textOf(nameIdElement);
  if (!nameId || nameId.length > 1024) throw new SamlRefused('the NameID is empty or too long');
  const confirmed = confirmation(subject, expected, now);
  const responseInResponseTo = attribute(response, 'InResponseTo');
  if (responseInResponseTo !== null && responseInResponseTo !== confirmed.inResponseTo) throw new SamlRefused('the response answers another request');
  const responseId = response.getAttribute('ID') ?? '';
  // The IDs are what a replay is recognised by (Profiles 4.1.4.5).
  if (!responseId || !assertion.getAttribute('ID')) throw new SamlRefused('the response and the assertion must have an ID');
  const until = conditions(assertion, expected, now);
  const notOnOrAfter = until && until < confirmed.notOnOrAfter ? until : confirmed.notOnOrAfter;
  return {
    responseId,
    assertionId: assertion.getAttribute('ID') ?? '',
    inResponseTo: confirmed.inResponseTo,
    nameId,
    nameIdFormat: nameIdElement.getAttribute('Format') ?? '',
    attributes: attributesOf(assertion),
    notOnOrAfter,
  };
}

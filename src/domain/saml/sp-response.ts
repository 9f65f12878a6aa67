import type { KeyObject } from 'node:crypto';
import { decryptParts, encryptedParts } from '../../security/saml-decryption.ts';
import { verifiedMessage } from '../../security/saml-signatures.ts';
import { STATUS } from './messages.ts';
import { MESSAGE_LIMITS, SAML_NS, SamlRefused, children, isElement, onlyChild, parseStrictXml, textOf } from './xml.ts';

// The Response an external IdP posts to our ACS (SAML 2.0 Core 3.3.3,
// Profiles 4.1.4.2-4.1.4.5). The Response or its one Assertion must carry
// the IdP's signature; only the signed element is read, from the bytes the
// signature covers (src/security/saml-signatures.ts), so content wrapped
// around or beside it is never looked at. An encrypted assertion must be
// signed itself, whatever signs the Response: the encryption's integrity is
// not the IdP's word (CBC is malleable, and anyone can encrypt to our
// certificate), so the decrypted assertion carries its own signature.

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
  /** The provider's own private key, the one its SP metadata offers for encryption; asked for only when an assertion is encrypted. */
  decryptionKey(): KeyObject;
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

const reparse = (signed: string) => parseStrictXml(signed, MESSAGE_LIMITS);

/**
 * One refusal for everything that can go wrong once the private key is used
 * (src/security/saml-decryption.ts): unwrapping, decrypting, the
 * plaintext's XML and its signature all fail alike, so that no answer
 * tells an attacker more than "no".
 */
export const UNDECRYPTABLE = 'the encrypted assertion could not be decrypted, or it holds no assertion signed by the identity provider';

/** The assertion an EncryptedAssertion holds, read from the bytes its own signature covers. */
function decryptedAssertion(encrypted: Element, expected: ResponseExpectations): Element {
  const parts = encryptedParts(encrypted);
  const key = expected.decryptionKey();
  try {
    const plaintext = decryptParts(parts, key);
    const assertion = parseStrictXml(plaintext, MESSAGE_LIMITS);
    if (!isElement(assertion, SAML_NS.assertion, 'Assertion')) throw new Error('not an assertion');
    return reparse(verifiedMessage(plaintext, assertion, expected.certificates));
  } catch {
    throw new SamlRefused(UNDECRYPTABLE);
  }
}

/**
 * The one Assertion or EncryptedAssertion of `response`, as read from signed
 * bytes: the response's signature covers a plain assertion when
 * `responseSigned`; otherwise the assertion's own must.
 */
function signedAssertion(xml: string, response: Element, responseSigned: boolean, expected: ResponseExpectations): Element {
  const encrypted = children(response, SAML_NS.assertion, 'EncryptedAssertion');
  const plain = children(response, SAML_NS.assertion, 'Assertion');
  if (encrypted.length + plain.length !== 1) throw new SamlRefused('the response must carry exactly one assertion');
  if (encrypted.length) return decryptedAssertion(encrypted[0]!, expected);
  const assertion = plain[0]!;
  if (responseSigned) return assertion;
  if (!children(assertion, SAML_NS.dsig, 'Signature').length) throw new SamlRefused('neither the response nor the assertion is signed');
  return reparse(verifiedMessage(xml, assertion, expected.certificates));
}

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
  const assertion = signedAssertion(xml, response, responseSigned, expected);
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

import { randomBytes } from 'node:crypto';
import { SignedXml } from 'xml-crypto';

// SAML responses written by hand, as an IdP would post them to our ACS, for
// the tests of what a real IdP never sends (test/idps/saml-sign-in.test.ts).

export const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';

export const nowPlus = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
export const newId = () => `_${randomBytes(16).toString('hex')}`;

export interface Crafted {
  requestId: string;
  acs: string;
  audience: string;
  issuer: string;
  nameId?: string;
  notOnOrAfter?: string;
  assertionId?: string;
}

export function assertionXml(c: Crafted): string {
  const id = c.assertionId ?? newId();
  return (
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${id}" Version="2.0" IssueInstant="${nowPlus(0)}"><saml:Issuer>${c.issuer}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">${c.nameId ?? 'mallory'}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData InResponseTo="${c.requestId}" NotOnOrAfter="${c.notOnOrAfter ?? nowPlus(300)}" Recipient="${c.acs}"/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${nowPlus(-30)}" NotOnOrAfter="${c.notOnOrAfter ?? nowPlus(300)}"><saml:AudienceRestriction><saml:Audience>${c.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AttributeStatement><saml:Attribute Name="Email"><saml:AttributeValue>${c.nameId ?? 'mallory'}@evil.example.test</saml:AttributeValue></saml:Attribute></saml:AttributeStatement></saml:Assertion>`
  );
}

export function responseXml(c: Crafted, assertion: string): string {
  return `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${newId()}" Version="2.0" IssueInstant="${nowPlus(0)}" Destination="${c.acs}" InResponseTo="${c.requestId}"><saml:Issuer>${c.issuer}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>${assertion}</samlp:Response>`;
}

/** `xml` with the element of `id` signed as an IdP signs it. */
export function signed(xml: string, id: string, keyPem: string): string {
  const signer = new SignedXml({ privateKey: keyPem, signatureAlgorithm: RSA_SHA256, canonicalizationAlgorithm: EXC_C14N });
  signer.addReference({
    xpath: `//*[@ID='${id}']`,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', EXC_C14N],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  signer.computeSignature(xml, { prefix: 'ds', location: { reference: `//*[@ID='${id}']/*[local-name(.)='Issuer']`, action: 'after' } });
  return signer.getSignedXml();
}

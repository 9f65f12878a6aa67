import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { SignedXml } from 'xml-crypto';
import { parseIdpMetadata } from '../../src/domain/saml/idp-metadata.ts';
import { samlIdentityOf } from '../../src/domain/saml/sp-identity.ts';
import { readSamlResponse, type SamlAssertion } from '../../src/domain/saml/sp-response.ts';
import { SamlRefused } from '../../src/domain/saml/xml.ts';
import { opensslKeyPair } from '../saml/support.ts';

// The SP side's pure parts (docs/idps.md, SAML): the IdP metadata, the
// checks of a response the ACS takes, and the identity it yields.

const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';
const IDP = 'https://idp.example.test/metadata';
const SP = { entityId: 'https://sso.example.test/idps/1/saml/metadata', acs: 'https://sso.example.test/idps/1/saml/acs' };
const key = opensslKeyPair('unit-idp');
const at = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const id = () => `_${randomBytes(12).toString('hex')}`;

function sign(xml: string, elementId: string): string {
  const signer = new SignedXml({
    privateKey: key.keyPem,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: EXC_C14N,
  });
  signer.addReference({
    xpath: `//*[@ID='${elementId}']`,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', EXC_C14N],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  signer.computeSignature(xml, { prefix: 'ds', location: { reference: `//*[@ID='${elementId}']/*[local-name(.)='Issuer']`, action: 'after' } });
  return signer.getSignedXml();
}

interface Parts {
  status?: string;
  conditions?: string;
  destination?: string | null;
  signResponse?: boolean;
  encrypted?: boolean;
}

function response(parts: Parts = {}): string {
  const assertionId = id();
  const responseId = id();
  const conditions =
    parts.conditions ??
    `<saml:Conditions NotBefore="${at(-30)}" NotOnOrAfter="${at(300)}"><saml:AudienceRestriction><saml:Audience>${SP.entityId}</saml:Audience></saml:AudienceRestriction></saml:Conditions>`;
  const assertion =
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${assertionId}" Version="2.0" IssueInstant="${at(0)}"><saml:Issuer>${IDP}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">u-1</saml:NameID><saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData InResponseTo="_req" NotOnOrAfter="${at(300)}" Recipient="${SP.acs}"/></saml:SubjectConfirmation></saml:Subject>` +
    `${conditions}<saml:AttributeStatement><saml:Attribute Name="urn:oid:2.5.4.42"><saml:AttributeValue>Grace</saml:AttributeValue></saml:Attribute></saml:AttributeStatement></saml:Assertion>`;
  const body = parts.encrypted ? '<saml:EncryptedAssertion/>' : parts.signResponse ? assertion : sign(assertion, assertionId);
  const destination = parts.destination === null ? '' : ` Destination="${parts.destination ?? SP.acs}"`;
  const xml = `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${responseId}" Version="2.0" IssueInstant="${at(0)}"${destination} InResponseTo="_req"><saml:Issuer>${IDP}</saml:Issuer><samlp:Status><samlp:StatusCode Value="${parts.status ?? 'urn:oasis:names:tc:SAML:2.0:status:Success'}"/></samlp:Status>${body}</samlp:Response>`;
  return parts.signResponse ? sign(xml, responseId) : xml;
}

const read = (xml: string) => readSamlResponse(xml, { certificates: [key.certificate], idpEntityId: IDP, ...SP });

describe('SAML responses at the ACS', () => {
  it('takes a response whose assertion or whose response is signed, and reads the signed assertion', () => {
    for (const signResponse of [false, true]) {
      const assertion = read(response({ signResponse }));
      assert.equal(assertion.nameId, 'u-1');
      assert.equal(assertion.inResponseTo, '_req');
      assert.deepEqual(assertion.attributes, { 'urn:oid:2.5.4.42': ['Grace'] });
    }
  });

  it('refuses a failed status, an encrypted assertion, a signed response without Destination, a future NotBefore, no audience', () => {
    const cases: Array<[Parts, RegExp]> = [
      [{ status: 'urn:oasis:names:tc:SAML:2.0:status:Responder' }, /did not sign the user in/],
      [{ encrypted: true }, /encrypted assertions/],
      [{ signResponse: true, destination: null }, /must name its Destination/],
      [{ destination: 'https://elsewhere.example.test/acs' }, /Destination/],
      [
        {
          conditions: `<saml:Conditions NotBefore="${at(600)}"><saml:AudienceRestriction><saml:Audience>${SP.entityId}</saml:Audience></saml:AudienceRestriction></saml:Conditions>`,
        },
        /not valid yet/,
      ],
      [{ conditions: `<saml:Conditions NotOnOrAfter="${at(300)}"/>` }, /no audience/],
      [{ conditions: '' }, /no Conditions/],
    ];
    for (const [parts, reason] of cases)
      assert.throws(
        () => read(response(parts)),
        (err: Error) => err instanceof SamlRefused && reason.test(err.message),
        String(reason),
      );
  });
});

describe('the identity of an assertion', () => {
  const assertion = (nameIdFormat: string, attributes: Record<string, string[]>): SamlAssertion => ({
    responseId: '_r',
    assertionId: '_a',
    inResponseTo: '_req',
    nameId: '_transient-or-not',
    nameIdFormat,
    attributes,
    notOnOrAfter: new Date(),
  });
  const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';
  const TRANSIENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';

  it('maps attributes by OID, by the usual short names and by claim URIs; the email counts as unverified', () => {
    const identity = samlIdentityOf(
      assertion(PERSISTENT, {
        'urn:oid:0.9.2342.19200300.100.1.3': ['grace@example.test'],
        FirstName: ['Grace'],
        'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname': ['Hopper'],
        UserName: ['ghopper'],
      }),
      { nameIdFormat: PERSISTENT, transientMappingAttributeName: '' },
    );
    assert.deepEqual(identity, {
      id: '_transient-or-not',
      emailVerified: false,
      amr: [],
      email: 'grace@example.test',
      givenName: 'Grace',
      familyName: 'Hopper',
      preferredUsername: 'ghopper',
    });
  });

  it('names the user of a transient NameID by the mapping attribute, and refuses one without it', () => {
    const withUid = assertion(TRANSIENT, { uid: ['grace'] });
    assert.equal(samlIdentityOf(withUid, { nameIdFormat: PERSISTENT, transientMappingAttributeName: 'uid' }).id, 'grace');
    assert.throws(() => samlIdentityOf(withUid, { nameIdFormat: PERSISTENT, transientMappingAttributeName: '' }), SamlRefused);
    assert.throws(() => samlIdentityOf(assertion(TRANSIENT, {}), { nameIdFormat: TRANSIENT, transientMappingAttributeName: 'uid' }), SamlRefused);
  });
});

describe('IdP metadata', () => {
  const metadata = (inner: string) =>
    `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${IDP}"><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${inner}</md:IDPSSODescriptor></md:EntityDescriptor>`;
  const keyDescriptor = `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${key.certificate}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
  const post = '<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.example.test/sso"/>';

  it('reads the entityID, the SSO endpoints per binding and the signing certificates; an encryption key is not one', () => {
    const parsed = parseIdpMetadata(metadata(`${keyDescriptor.replace('use="signing"', 'use="encryption"')}${keyDescriptor}${post}`));
    assert.deepEqual(parsed, { entityId: IDP, sso: { post: 'https://idp.example.test/sso' }, certificates: [key.certificate] });
  });

  it('refuses metadata without an SSO service on a known binding, or without a signing certificate', () => {
    assert.throws(() => parseIdpMetadata(metadata(keyDescriptor)), /SingleSignOnService/);
    assert.throws(() => parseIdpMetadata(metadata(post)), /signing certificate/);
    assert.throws(() => parseIdpMetadata(metadata(`${keyDescriptor}${post.replace('HTTP-POST', 'HTTP-Artifact')}`)), /SingleSignOnService/);
  });
});

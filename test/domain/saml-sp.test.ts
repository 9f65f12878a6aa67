import assert from 'node:assert/strict';
import { createPrivateKey, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { SignedXml } from 'xml-crypto';
import { parseIdpMetadata } from '../../src/domain/saml/idp-metadata.ts';
import { samlIdentityOf } from '../../src/domain/saml/sp-identity.ts';
import { spMetadataXml } from '../../src/domain/saml/sp-messages.ts';
import { readSamlResponse, type SamlAssertion, UNDECRYPTABLE } from '../../src/domain/saml/sp-response.ts';
import { MESSAGE_LIMITS, parseStrictXml, SamlRefused } from '../../src/domain/saml/xml.ts';
import { encryptedParts } from '../../src/security/saml-decryption.ts';
import { opensslKeyPair } from '../saml/support.ts';
import { type Encryption, encryptedAssertion, flipBit } from '../support/saml-responses.ts';

// The SP side's pure parts (docs/idps.md, SAML): the IdP metadata, the
// checks of a response the ACS takes (encrypted assertions included), and
// the identity it yields.

const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';
const IDP = 'https://idp.example.test/metadata';
const SP = { entityId: 'https://sso.example.test/idps/1/saml/metadata', acs: 'https://sso.example.test/idps/1/saml/acs' };
const key = opensslKeyPair('unit-idp');
/** Our SP's key: the encryption certificate its metadata offers. */
const spKey = opensslKeyPair('unit-sp');
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
  /** The signed assertion goes encrypted, as `encryption` says, to `encryptFor` (our SP's certificate by default). */
  encryption?: Encryption;
  encryptFor?: string;
  /** What is encrypted instead of the signed assertion. */
  plaintext?: (signed: string, unsigned: string) => string;
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
  const signed = parts.signResponse && !parts.encryption ? assertion : sign(assertion, assertionId);
  const body = parts.encryption
    ? encryptedAssertion((parts.plaintext ?? ((x) => x))(signed, assertion), parts.encryptFor ?? spKey.certificate, parts.encryption)
    : signed;
  const destination = parts.destination === null ? '' : ` Destination="${parts.destination ?? SP.acs}"`;
  const xml = `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${responseId}" Version="2.0" IssueInstant="${at(0)}"${destination} InResponseTo="_req"><saml:Issuer>${IDP}</saml:Issuer><samlp:Status><samlp:StatusCode Value="${parts.status ?? 'urn:oasis:names:tc:SAML:2.0:status:Success'}"/></samlp:Status>${body}</samlp:Response>`;
  return parts.signResponse ? sign(xml, responseId) : xml;
}

const read = (xml: string) =>
  readSamlResponse(xml, { certificates: [key.certificate], idpEntityId: IDP, ...SP, decryptionKey: () => createPrivateKey(spKey.keyPem) });

describe('SAML responses at the ACS', () => {
  it('takes a response whose assertion or whose response is signed, and reads the signed assertion', () => {
    for (const signResponse of [false, true]) {
      const assertion = read(response({ signResponse }));
      assert.equal(assertion.nameId, 'u-1');
      assert.equal(assertion.inResponseTo, '_req');
      assert.deepEqual(assertion.attributes, { 'urn:oid:2.5.4.42': ['Grace'] });
    }
  });

  it('refuses a failed status, a signed response without Destination, a future NotBefore, no audience', () => {
    const cases: Array<[Parts, RegExp]> = [
      [{ status: 'urn:oasis:names:tc:SAML:2.0:status:Responder' }, /did not sign the user in/],
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

describe('encrypted assertions at the ACS', () => {
  const refusedWith = (parts: Parts, reason: RegExp | string, name: string) =>
    assert.throws(
      () => read(response(parts)),
      (err: Error) => err instanceof SamlRefused && (typeof reason === 'string' ? err.message === reason : reason.test(err.message)),
      name,
    );

  it('takes AES-128 and AES-256 in GCM and CBC, the key wrapped with RSA-OAEP (MGF1-SHA1, or xmlenc11 with SHA-256) inline or beside, under a signed response or not', () => {
    const datas = ['aes128-gcm', 'aes256-gcm', 'aes128-cbc', 'aes256-cbc'] as const;
    for (const data of datas)
      for (const transport of ['rsa-oaep-mgf1p', 'rsa-oaep'] as const)
        for (const keyPlacement of ['inline', 'peer'] as const)
          for (const signResponse of [false, true]) {
            const assertion = read(response({ signResponse, encryption: { data, transport, keyPlacement } }));
            assert.equal(assertion.nameId, 'u-1', `${data} ${transport} ${keyPlacement}`);
            assert.deepEqual(assertion.attributes, { 'urn:oid:2.5.4.42': ['Grace'] });
          }
  });

  it('refuses, saying why, what the IdP wrote in the clear: RSA 1.5 key transport, 3DES, two assertions, an oversized ciphertext', () => {
    refusedWith({ encryption: { transport: 'rsa-1_5' } }, /RSA 1\.5/, 'RSA 1.5');
    refusedWith({ encryption: { transport: 'rsa-1_5', data: 'aes128-cbc' } }, /RSA 1\.5/, 'RSA 1.5 with CBC');
    refusedWith({ encryption: { data: 'tripledes-cbc' } }, /AES-128 or AES-256/, '3DES');
    const xml = response({ encryption: {} });
    const twice = xml.replace(/(<saml:EncryptedAssertion[\s\S]*<\/saml:EncryptedAssertion>)/, '$1$1');
    assert.throws(() => read(twice), /exactly one assertion/);
    const huge = xml.replace(/(<xenc:CipherValue>)([^<]*)(<\/xenc:CipherValue><\/xenc:CipherData><\/xenc:EncryptedData>)/, `$1${'A'.repeat(90_000)}$3`);
    assert.throws(() => read(huge), /larger than 65536 bytes/, 'the message limit comes first');
    const element = /<saml:EncryptedAssertion[\s\S]*<\/saml:EncryptedAssertion>/.exec(huge)![0];
    assert.throws(() => encryptedParts(parseStrictXml(element, { ...MESSAGE_LIMITS, maxBytes: 1 << 20 })), /encrypted assertion is larger than/);
  });

  it('refuses with one and the same message whatever fails once the key is used: tampered GCM or CBC, another key, an unsigned or DTD-carrying plaintext, not an assertion, not XML', () => {
    const other = opensslKeyPair('unit-other');
    const cases: Array<[string, Parts]> = [
      ['GCM ciphertext tampered', { encryption: { data: 'aes256-gcm', tamper: flipBit(40) } }],
      ['GCM tag tampered', { encryption: { data: 'aes128-gcm', tamper: flipBit(-1) } }],
      ['CBC IV tampered (the first block changes)', { encryption: { data: 'aes128-cbc', tamper: flipBit(3) } }],
      ['CBC padding broken', { encryption: { data: 'aes256-cbc', tamper: flipBit(-1) } }],
      ['CBC block in the middle tampered', { encryption: { data: 'aes128-cbc', tamper: flipBit(100) } }],
      ['encrypted to another key', { encryption: {}, encryptFor: other.certificate }],
      [
        'the decrypted assertion unsigned (the response signed)',
        { signResponse: true, encryption: { data: 'aes128-cbc' }, plaintext: (_, unsigned) => unsigned },
      ],
      ['the decrypted assertion unsigned', { encryption: {}, plaintext: (_, unsigned) => unsigned }],
      ['a DTD in the plaintext', { encryption: {}, plaintext: (signed) => `<!DOCTYPE a [<!ENTITY e "x">]>${signed}` }],
      ['not an assertion', { encryption: {}, plaintext: () => `<saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">${IDP}</saml:Issuer>` }],
      ['not XML', { encryption: { data: 'aes128-cbc' }, plaintext: () => 'just text' }],
    ];
    for (const [name, parts] of cases) refusedWith(parts, UNDECRYPTABLE, name);
  });

  it('the SP metadata offers the provider certificate for encryption too, GCM preferred', () => {
    const xml = spMetadataXml(SP, spKey.certificate, false, 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent');
    assert.match(
      xml,
      new RegExp(
        `<md:KeyDescriptor use="encryption"><ds:KeyInfo[^>]*><ds:X509Data><ds:X509Certificate>${spKey.certificate.replace(/[+/]/g, '\\$&')}</ds:X509Certificate>`,
      ),
    );
    assert.match(xml, /use="encryption">[\s\S]*aes256-gcm[\s\S]*aes128-cbc[\s\S]*rsa-oaep-mgf1p[\s\S]*<\/md:KeyDescriptor>/);
    assert.doesNotMatch(xml, /rsa-1_5/);
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

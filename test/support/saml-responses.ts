import { constants, createCipheriv, publicEncrypt, randomBytes, X509Certificate } from 'node:crypto';
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

const XENC = 'http://www.w3.org/2001/04/xmlenc#';
const XENC11 = 'http://www.w3.org/2009/xmlenc11#';
const DSIG = 'http://www.w3.org/2000/09/xmldsig#';

export interface Encryption {
  data?: 'aes128-gcm' | 'aes256-gcm' | 'aes128-cbc' | 'aes256-cbc' | 'tripledes-cbc';
  /** rsa-oaep is xmlenc11's, with SHA-256 for the digest and MGF1. */
  transport?: 'rsa-oaep-mgf1p' | 'rsa-oaep' | 'rsa-1_5';
  /** The EncryptedKey inside the EncryptedData's KeyInfo, or beside it in the EncryptedAssertion. */
  keyPlacement?: 'inline' | 'peer';
  /** Changes the ciphertext (IV and tag included) after encryption. */
  tamper?: (ciphertext: Buffer) => Buffer;
}

function encryptData(data: NonNullable<Encryption['data']>, key: Buffer, plaintext: Buffer): Buffer {
  if (data.endsWith('gcm')) {
    const iv = randomBytes(12);
    const cipher = createCipheriv(data === 'aes128-gcm' ? 'aes-128-gcm' : 'aes-256-gcm', key, iv);
    return Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  }
  const name = data === 'aes128-cbc' ? 'aes-128-cbc' : data === 'aes256-cbc' ? 'aes-256-cbc' : 'des-ede3-cbc';
  const iv = randomBytes(data === 'tripledes-cbc' ? 8 : 16);
  const cipher = createCipheriv(name, key, iv);
  return Buffer.concat([iv, cipher.update(plaintext), cipher.final()]);
}

/** `<saml:EncryptedAssertion>` holding `plaintext` for the certificate (base64 DER), as an IdP writes it (XML Encryption 1.1). */
export function encryptedAssertion(plaintext: string, certificate: string, choice: Encryption = {}): string {
  const data = choice.data ?? 'aes256-gcm';
  const transport = choice.transport ?? 'rsa-oaep-mgf1p';
  const key = randomBytes(data.startsWith('aes128') ? 16 : data === 'tripledes-cbc' ? 24 : 32);
  const publicKey = new X509Certificate(Buffer.from(certificate, 'base64')).publicKey;
  const wrapped =
    transport === 'rsa-1_5'
      ? publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_PADDING }, key)
      : publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: transport === 'rsa-oaep' ? 'sha256' : 'sha1' }, key);
  const ciphertext = encryptData(data, key, Buffer.from(plaintext, 'utf8'));
  const transportMethod =
    transport === 'rsa-oaep'
      ? `<xenc:EncryptionMethod Algorithm="${XENC11}rsa-oaep"><ds:DigestMethod xmlns:ds="${DSIG}" Algorithm="${XENC}sha256"/><xenc11:MGF xmlns:xenc11="${XENC11}" Algorithm="${XENC11}mgf1sha256"/></xenc:EncryptionMethod>`
      : `<xenc:EncryptionMethod Algorithm="${XENC}${transport}"/>`;
  const encryptedKey = `<xenc:EncryptedKey xmlns:xenc="${XENC}" Id="_key">${transportMethod}<xenc:CipherData><xenc:CipherValue>${wrapped.toString('base64')}</xenc:CipherValue></xenc:CipherData></xenc:EncryptedKey>`;
  const peer = choice.keyPlacement === 'peer';
  const keyInfo = peer
    ? `<ds:KeyInfo xmlns:ds="${DSIG}"><ds:RetrievalMethod URI="#_key" Type="${XENC}EncryptedKey"/></ds:KeyInfo>`
    : `<ds:KeyInfo xmlns:ds="${DSIG}">${encryptedKey}</ds:KeyInfo>`;
  const dataUri = data.endsWith('gcm') ? `${XENC11}${data}` : `${XENC}${data}`;
  const value = (choice.tamper ?? ((c) => c))(ciphertext).toString('base64');
  return (
    `<saml:EncryptedAssertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"><xenc:EncryptedData xmlns:xenc="${XENC}" Type="${XENC}Element">` +
    `<xenc:EncryptionMethod Algorithm="${dataUri}"/>${keyInfo}<xenc:CipherData><xenc:CipherValue>${value}</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData>` +
    `${peer ? encryptedKey : ''}</saml:EncryptedAssertion>`
  );
}

/** One bit of the byte at `index` flipped (from the end when negative). */
export const flipBit = (index: number) => (ciphertext: Buffer) => {
  const copy = Buffer.from(ciphertext);
  const at = index < 0 ? copy.length + index : index;
  copy[at] = copy[at]! ^ 0x01;
  return copy;
};

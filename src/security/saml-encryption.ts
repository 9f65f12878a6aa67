import { X509Certificate, constants, createCipheriv, publicEncrypt, randomBytes } from 'node:crypto';

// Encrypted assertions (SAML 2.0 Core 2.3.4, XML Encryption 1.1): the
// signed assertion, as the IdP wrote it, becomes the plaintext of one
// xenc:EncryptedData under a fresh AES-256-GCM key, and that key is
// wrapped for the SP's encryption certificate with RSA-OAEP (MGF1 with
// SHA-1, `rsa-oaep-mgf1p`, the one every SAML stack reads). Only the IdP
// encrypts: nothing here ever decrypts, so none of XML Encryption's
// decryption-side oracles apply (docs/decisions.md).

const XENC = 'http://www.w3.org/2001/04/xmlenc#';
const DSIG = 'http://www.w3.org/2000/09/xmldsig#';
export const ENCRYPTION_ALGORITHMS = {
  aes256Gcm: 'http://www.w3.org/2009/xmlenc11#aes256-gcm',
  rsaOaepMgf1p: 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p',
} as const;

/** XML Encryption 1.1 5.2.4: a 96-bit IV before the ciphertext, the 128-bit tag after it. */
function aesGcm(plaintext: Buffer, key: Buffer): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

/** `<saml:EncryptedAssertion>` holding `assertionXml` (a self-contained element) for the certificate `certificate` (base64 DER). */
export function encryptedAssertion(assertionXml: string, certificate: string): string {
  const publicKey = new X509Certificate(Buffer.from(certificate, 'base64')).publicKey;
  const key = randomBytes(32);
  const wrapped = publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, key);
  const cipherText = aesGcm(Buffer.from(assertionXml, 'utf8'), key);
  return (
    `<saml:EncryptedAssertion><xenc:EncryptedData xmlns:xenc="${XENC}" Type="${XENC}Element">` +
    `<xenc:EncryptionMethod Algorithm="${ENCRYPTION_ALGORITHMS.aes256Gcm}"/>` +
    `<ds:KeyInfo xmlns:ds="${DSIG}"><xenc:EncryptedKey><xenc:EncryptionMethod Algorithm="${ENCRYPTION_ALGORITHMS.rsaOaepMgf1p}"><ds:DigestMethod Algorithm="${DSIG}sha1"/></xenc:EncryptionMethod>` +
    `<xenc:CipherData><xenc:CipherValue>${wrapped.toString('base64')}</xenc:CipherValue></xenc:CipherData></xenc:EncryptedKey></ds:KeyInfo>` +
    `<xenc:CipherData><xenc:CipherValue>${cipherText.toString('base64')}</xenc:CipherValue></xenc:CipherData>` +
    '</xenc:EncryptedData></saml:EncryptedAssertion>'
  );
}

/**
 * `responseXml` with its one signed `saml:Assertion` replaced by the
 * encrypted form. The IdP wrote the response: the assertion declares its
 * own namespaces, and no text inside it can spell its end tag (escaped).
 */
export function encryptAssertionIn(responseXml: string, certificate: string): string {
  const start = responseXml.indexOf('<saml:Assertion ');
  const endTag = '</saml:Assertion>';
  const end = responseXml.indexOf(endTag);
  if (start === -1 || end === -1) throw new Error('the response holds no assertion to encrypt');
  const assertion = responseXml.slice(start, end + endTag.length);
  return responseXml.slice(0, start) + encryptedAssertion(assertion, certificate) + responseXml.slice(end + endTag.length);
}

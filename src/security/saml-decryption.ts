import { type CipherGCMTypes, constants, createDecipheriv, privateDecrypt, type KeyObject } from 'node:crypto';
import { MESSAGE_LIMITS, SAML_NS, SamlRefused, children, onlyChild, textOf } from '../domain/saml/xml.ts';

// Encrypted assertions sent to our SP (SAML 2.0 Core 2.3.4, XML Encryption
// 1.1), in two halves kept apart on purpose:
// - `encryptedParts` reads what the IdP wrote in the clear (algorithms,
//   sizes) and refuses with a precise reason: nothing secret decides it;
// - `decryptParts` uses the private key, and every way it can fail throws
//   the same plain Error, which the caller turns into one refusal together
//   with the parsing and signature check of the plaintext
//   (src/domain/saml/sp-response.ts). An answer that told a bad padding from
//   bad XML is the oracle of Jager & Somorovsky, "How To Break XML
//   Encryption" (CCS 2011); the same goes for OAEP decoding (Manger, 2001).
// Key transport is RSA-OAEP only: RSA 1.5 (PKCS#1 v1.5) is Bleichenbacher's
// oracle ("Bleichenbacher's Attack Strikes Again", Jager, Schinzel &
// Somorovsky 2012), refused before any key is touched.

const XENC = 'http://www.w3.org/2001/04/xmlenc#';
const XENC11 = 'http://www.w3.org/2009/xmlenc11#';
const NS = { xenc: XENC, xenc11: XENC11 } as const;

export const DECRYPTION_ALGORITHMS = {
  aes128Gcm: `${XENC11}aes128-gcm`,
  aes256Gcm: `${XENC11}aes256-gcm`,
  aes128Cbc: `${XENC}aes128-cbc`,
  aes256Cbc: `${XENC}aes256-cbc`,
  rsaOaepMgf1p: `${XENC}rsa-oaep-mgf1p`,
  rsaOaep: `${XENC11}rsa-oaep`,
  rsa15: `${XENC}rsa-1_5`,
} as const;

type DataCipher = { mode: 'gcm'; name: CipherGCMTypes; keyLength: number } | { mode: 'cbc'; name: 'aes-128-cbc' | 'aes-256-cbc'; keyLength: number };

const DATA_CIPHERS: Record<string, DataCipher> = {
  [DECRYPTION_ALGORITHMS.aes128Gcm]: { mode: 'gcm', name: 'aes-128-gcm', keyLength: 16 },
  [DECRYPTION_ALGORITHMS.aes256Gcm]: { mode: 'gcm', name: 'aes-256-gcm', keyLength: 32 },
  [DECRYPTION_ALGORITHMS.aes128Cbc]: { mode: 'cbc', name: 'aes-128-cbc', keyLength: 16 },
  [DECRYPTION_ALGORITHMS.aes256Cbc]: { mode: 'cbc', name: 'aes-256-cbc', keyLength: 32 },
};

/** XML Signature and XML Encryption digest URIs, as node:crypto names them. */
const DIGESTS: Record<string, string> = {
  'http://www.w3.org/2000/09/xmldsig#sha1': 'sha1',
  [`${XENC}sha256`]: 'sha256',
  'http://www.w3.org/2001/04/xmldsig-more#sha384': 'sha384',
  [`${XENC}sha512`]: 'sha512',
};
const MGFS: Record<string, string> = {
  [`${XENC11}mgf1sha1`]: 'sha1',
  [`${XENC11}mgf1sha256`]: 'sha256',
  [`${XENC11}mgf1sha384`]: 'sha384',
  [`${XENC11}mgf1sha512`]: 'sha512',
};

/**
 * The plaintext may be no larger than the strict parser reads a message
 * (src/domain/saml/xml.ts); with the IV and the GCM tag or CBC padding on
 * top, this is the most ciphertext ever decrypted.
 */
export const MAX_CIPHERTEXT_BYTES = MESSAGE_LIMITS.maxBytes + 48;

/** What decryption needs, read from the clear parts of a `saml:EncryptedAssertion`. */
export interface EncryptedParts {
  cipher: DataCipher;
  ciphertext: Buffer;
  /** The wrapped AES key and how it was wrapped (RSA-OAEP; MGF1 and the digest use one hash). */
  wrappedKey: Buffer;
  oaepHash: string;
  oaepLabel?: Buffer;
}

function one(parent: Element, ns: string, localName: string, what: string): Element {
  const found = children(parent, ns, localName);
  if (found.length !== 1) throw new SamlRefused(`the encrypted assertion must hold exactly one ${what}`);
  return found[0]!;
}

/** A CipherValue, its base64 checked and its size bounded before decoding. */
function cipherValue(parent: Element, what: string): Buffer {
  const cipherData = one(parent, NS.xenc, 'CipherData', `${what} CipherData`);
  const value = textOf(one(cipherData, NS.xenc, 'CipherValue', `${what} CipherValue`)).replace(/\s+/g, '');
  if (value.length > Math.ceil(MAX_CIPHERTEXT_BYTES / 3) * 4) throw new SamlRefused(`the encrypted assertion is larger than ${MAX_CIPHERTEXT_BYTES} bytes`);
  if (!value || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) throw new SamlRefused(`the encrypted assertion's ${what} is not base64`);
  return Buffer.from(value, 'base64');
}

/** The one EncryptedKey: inside the EncryptedData's KeyInfo, or beside the EncryptedData (Core 2.3.4 allows both). */
function encryptedKeyOf(encryptedAssertion: Element, encryptedData: Element): Element {
  const keyInfo = onlyChild(encryptedData, SAML_NS.dsig, 'KeyInfo');
  const inline = keyInfo ? children(keyInfo, NS.xenc, 'EncryptedKey') : [];
  const peers = children(encryptedAssertion, NS.xenc, 'EncryptedKey');
  const keys = [...inline, ...peers];
  if (keys.length !== 1) throw new SamlRefused('the encrypted assertion must hold exactly one EncryptedKey');
  return keys[0]!;
}

/** The OAEP parameters of a key transport method; RSA 1.5 and anything else are refused. */
function keyTransport(method: Element): { oaepHash: string; oaepLabel?: Buffer } {
  const algorithm = method.getAttribute('Algorithm') ?? '';
  if (algorithm === DECRYPTION_ALGORITHMS.rsa15) throw new SamlRefused('the key transport RSA 1.5 (PKCS#1 v1.5) is not accepted; the IdP must use RSA-OAEP');
  if (algorithm !== DECRYPTION_ALGORITHMS.rsaOaepMgf1p && algorithm !== DECRYPTION_ALGORITHMS.rsaOaep)
    throw new SamlRefused('the key transport must be RSA-OAEP');
  const digestElement = onlyChild(method, SAML_NS.dsig, 'DigestMethod');
  const digest = digestElement ? DIGESTS[digestElement.getAttribute('Algorithm') ?? ''] : 'sha1';
  if (!digest) throw new SamlRefused('the RSA-OAEP digest is not one of SHA-1, SHA-256, SHA-384, SHA-512');
  // rsa-oaep-mgf1p fixes MGF1 to SHA-1; xmlenc11 names it (SHA-1 by default).
  const mgfElement = algorithm === DECRYPTION_ALGORITHMS.rsaOaep ? onlyChild(method, NS.xenc11, 'MGF') : undefined;
  const mgf = mgfElement ? MGFS[mgfElement.getAttribute('Algorithm') ?? ''] : 'sha1';
  // node:crypto runs MGF1 with the OAEP digest: the two must agree.
  if (mgf !== digest) throw new SamlRefused('RSA-OAEP must use the same hash for its digest and MGF1');
  const params = onlyChild(method, NS.xenc, 'OAEPparams');
  return params ? { oaepHash: digest, oaepLabel: Buffer.from(textOf(params), 'base64') } : { oaepHash: digest };
}

/** The parts of `encryptedAssertion` (a `saml:EncryptedAssertion`); SamlRefused naming what is not accepted. */
export function encryptedParts(encryptedAssertion: Element): EncryptedParts {
  const encryptedData = one(encryptedAssertion, NS.xenc, 'EncryptedData', 'EncryptedData');
  const type = encryptedData.getAttribute('Type');
  if (type && type !== `${XENC}Element`) throw new SamlRefused('the encrypted data must be an element');
  const dataMethod = one(encryptedData, NS.xenc, 'EncryptionMethod', 'EncryptionMethod');
  const cipher = DATA_CIPHERS[dataMethod.getAttribute('Algorithm') ?? ''];
  if (!cipher) throw new SamlRefused('the assertion must be encrypted with AES-128 or AES-256, in GCM or CBC');
  const ciphertext = cipherValue(encryptedData, 'EncryptedData');
  const encryptedKey = encryptedKeyOf(encryptedAssertion, encryptedData);
  const transport = keyTransport(one(encryptedKey, NS.xenc, 'EncryptionMethod', 'key EncryptionMethod'));
  return { cipher, ciphertext, wrappedKey: cipherValue(encryptedKey, 'EncryptedKey'), ...transport };
}

/** XML Encryption 1.1 5.2.4: a 96-bit IV, the ciphertext, the 128-bit tag. */
function aesGcm(name: CipherGCMTypes, key: Buffer, data: Buffer): Buffer {
  if (data.length < 12 + 16) throw new Error('undecryptable');
  const decipher = createDecipheriv(name, key, data.subarray(0, 12), { authTagLength: 16 });
  decipher.setAuthTag(data.subarray(data.length - 16));
  return Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()]);
}

/**
 * XML Encryption 1.1 5.2.1: a 128-bit IV, then blocks whose last byte
 * counts the padding; the other padding bytes may be anything (Apache
 * Santuario writes random ones), so only that count is read.
 */
function aesCbc(name: string, key: Buffer, data: Buffer): Buffer {
  if (data.length < 32 || data.length % 16 !== 0) throw new Error('undecryptable');
  const decipher = createDecipheriv(name, key, data.subarray(0, 16)).setAutoPadding(false);
  const padded = Buffer.concat([decipher.update(data.subarray(16)), decipher.final()]);
  const padding = padded[padded.length - 1]!;
  if (padding < 1 || padding > 16) throw new Error('undecryptable');
  return padded.subarray(0, padded.length - padding);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The plaintext of `parts` with `privateKey`. Every failure throws the same
 * Error('undecryptable'), whatever went wrong: the caller must not tell
 * them apart, nor from what it finds wrong with the plaintext.
 */
export function decryptParts(parts: EncryptedParts, privateKey: KeyObject): string {
  try {
    const key = privateDecrypt(
      { key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: parts.oaepHash, ...(parts.oaepLabel ? { oaepLabel: parts.oaepLabel } : {}) },
      parts.wrappedKey,
    );
    if (key.length !== parts.cipher.keyLength) throw new Error('undecryptable');
    const { cipher } = parts;
    const plaintext = cipher.mode === 'gcm' ? aesGcm(cipher.name, key, parts.ciphertext) : aesCbc(cipher.name, key, parts.ciphertext);
    return UTF8.decode(plaintext);
  } catch {
    throw new Error('undecryptable');
  }
}

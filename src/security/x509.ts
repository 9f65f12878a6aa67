import { createHash, createPrivateKey, createPublicKey, sign, type JsonWebKey, type KeyObject } from 'node:crypto';

// A self-signed X.509 certificate (RFC 5280) for one of the instance's RSA
// signing keys, as SAML metadata carries keys (docs/decisions.md). It is
// derived from the key alone: the serial from the key's id, the validity
// from its activation, and RSA PKCS#1 v1.5 signatures are deterministic, so
// every node computes the same bytes and nothing needs storing. Version 1
// (no extensions): it only carries the public key; no SP treats it as a CA.

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const tlv = (tag: number, content: Buffer) => Buffer.concat([Buffer.from([tag]), length(content.length), content]);
const sequence = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => tlv(0x31, Buffer.concat(parts));
const NULL = Buffer.from([0x05, 0x00]);

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes = [a! * 40 + b!];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let v = arc >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function positiveInteger(bytes: Buffer): Buffer {
  const trimmed = bytes[0] === 0 ? bytes.subarray(1) : bytes;
  return tlv(0x02, trimmed[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

/** UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5). */
function time(date: Date): Buffer {
  const iso = date.toISOString();
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(digits.slice(2))) : tlv(0x18, Buffer.from(digits));
}

const name = (commonName: string) => sequence(set(sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName, 'utf8')))));
const SHA256_WITH_RSA = sequence(oid('1.2.840.113549.1.1.11'), NULL);

/** How long the certificate says it is valid; SAML metadata uses it as a key carrier, key rotation replaces it long before. */
const VALIDITY_YEARS = 20;

export interface CertificateInput {
  /** The private RSA key as a JWK (the signing key's form). */
  privateJwk: JsonWebKey;
  kid: string;
  commonName: string;
  notBefore: Date;
}

/** The certificate, DER. */
export function selfSignedCertificate(input: CertificateInput): Buffer {
  const privateKey: KeyObject = createPrivateKey({ key: input.privateJwk, format: 'jwk' });
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const serial = createHash('sha256').update(input.kid).digest().subarray(0, 16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  const notBefore = new Date(Math.floor(input.notBefore.getTime() / 1000) * 1000);
  const notAfter = new Date(notBefore);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + VALIDITY_YEARS);
  const tbs = sequence(
    positiveInteger(serial),
    SHA256_WITH_RSA,
    name(input.commonName),
    sequence(time(notBefore), time(notAfter)),
    name(input.commonName),
    spki,
  );
  const signature = sign('sha256', tbs, privateKey);
  return sequence(tbs, SHA256_WITH_RSA, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
}

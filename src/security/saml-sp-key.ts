import { createPrivateKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import { samlSigner, type SamlSigner } from './saml-signatures.ts';
import { selfSignedCertificate } from './x509.ts';

/** A new provider's signing key: RSA 2048, its private JWK as JSON (sealed at rest like every provider secret). */
export function newSpSigningKey(): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return JSON.stringify(privateKey.export({ format: 'jwk' }));
}

/**
 * A SAML provider's own signing key (docs/idps.md, SAML): the private JWK
 * made at the provider's creation and sealed with its secrets, and the
 * certificate our SP metadata carries, derived from it (./x509.ts), so
 * nothing but the sealed key is stored.
 */
export function spSigner(sealedSecret: string, idp: { id: string; creationDate: Date }, commonName: string): SamlSigner {
  const privateJwk = JSON.parse(sealedSecret) as JsonWebKey;
  const certificate = selfSignedCertificate({ privateJwk, kid: idp.id, commonName, notBefore: idp.creationDate });
  return samlSigner(privateJwk, certificate);
}

/** The same key, as the SP metadata's encryption certificate offers it: what decrypts the IdP's encrypted assertions. */
export function spDecryptionKey(sealedSecret: string): KeyObject {
  return createPrivateKey({ key: JSON.parse(sealedSecret) as JsonWebKey, format: 'jwk' });
}

import type { JsonWebKey } from 'node:crypto';
import type { SigningKey } from '../keys/signing-keys.ts';
import { selfSignedCertificate } from '../security/x509.ts';
import { samlSigner, type SamlSigner } from '../security/saml-signatures.ts';

// The IdP signs with the instance's signing key in use (the engine's first
// RS256 key) and publishes the certificates of that key and of keys about
// to take over, so SPs that read the metadata trust the next key before it
// signs (docs/api/signing-keys.md). Certificates are derived from the keys
// (src/security/x509.ts), once per key on each node.

export interface IdpKeys {
  signer(): SamlSigner;
  /** Base64 DER certificates of the key in use and of keys to come. */
  certificates(): string[];
}

export function idpKeys(currentKeys: () => SigningKey[], commonName: string): IdpKeys {
  const certificates = new Map<string, Buffer>();
  const signers = new Map<string, SamlSigner>();
  const certificateOf = (key: SigningKey) => {
    let der = certificates.get(key.kid);
    if (!der) {
      der = selfSignedCertificate({ privateJwk: key.privateJwk as JsonWebKey, kid: key.kid, commonName, notBefore: key.activatesAt });
      certificates.set(key.kid, der);
    }
    return der;
  };
  return {
    signer() {
      const key = currentKeys()[0];
      if (!key) throw new Error('no signing key');
      let signer = signers.get(key.kid);
      if (!signer) {
        signer = samlSigner(key.privateJwk as JsonWebKey, certificateOf(key));
        signers.set(key.kid, signer);
      }
      return signer;
    },
    certificates() {
      const now = Date.now();
      const [current, ...rest] = currentKeys();
      const upcoming = rest.filter((key) => key.activatesAt.getTime() > now);
      return [current, ...upcoming].flatMap((key) => (key ? [certificateOf(key).toString('base64')] : []));
    },
  };
}

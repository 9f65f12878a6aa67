import { X509Certificate, createPrivateKey, createVerify, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { SignedXml } from 'xml-crypto';
import { SAML_NS, SamlRefused, children } from '../domain/saml/xml.ts';

// XML signatures of SAML messages (XML-DSig 1.1 with exclusive
// canonicalization, as the SAML 2.0 Core 5 profile asks), through
// xml-crypto (docs/decisions.md), and the query-string signatures of the
// HTTP-Redirect binding (SAML 2.0 Bindings 3.4.4.1).
//
// Verification is narrow on purpose, against signature wrapping: the one
// ds:Signature must be a direct child of the message's root, hold exactly
// one Reference, whose URI names the root's own ID, with only the enveloped
// and exclusive-c14n transforms and SHA-2 algorithms. Then the caller reads
// the message again from the signed bytes xml-crypto answers, never from
// the document that carried them.

export const ALGORITHMS = {
  rsaSha256: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  rsaSha512: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  sha512: 'http://www.w3.org/2001/04/xmlenc#sha512',
  excC14n: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  enveloped: 'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
} as const;

const SIGNATURE_METHODS: Record<string, string> = { [ALGORITHMS.rsaSha256]: 'sha256', [ALGORITHMS.rsaSha512]: 'sha512' };
const DIGEST_METHODS = new Set<string>([ALGORITHMS.sha256, ALGORITHMS.sha512]);
const TRANSFORMS = new Set<string>([ALGORITHMS.enveloped, ALGORITHMS.excC14n]);

/** The signing key as xml-crypto and the Redirect binding take it, with its certificate (base64 DER). */
export interface SamlSigner {
  privateKey: KeyObject;
  privatePem: string;
  certificate: string;
}

export function samlSigner(privateJwk: JsonWebKey, certificateDer: Buffer): SamlSigner {
  const privateKey = createPrivateKey({ key: privateJwk, format: 'jwk' });
  return { privateKey, privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), certificate: certificateDer.toString('base64') };
}

function pemOf(base64Der: string): string {
  return `-----BEGIN CERTIFICATE-----\n${base64Der.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
}

/** `xml` with the element of `id` (an Assertion) signed: RSA-SHA256, exclusive c14n, the signature right after its Issuer. */
export function signElement(
  xml: string,
  id: string,
  localName: 'Assertion' | 'Response' | 'LogoutResponse' | 'LogoutRequest' | 'AuthnRequest',
  signer: SamlSigner,
): string {
  const signed = new SignedXml({
    privateKey: signer.privatePem,
    publicCert: pemOf(signer.certificate),
    signatureAlgorithm: ALGORITHMS.rsaSha256,
    canonicalizationAlgorithm: ALGORITHMS.excC14n,
  });
  signed.addReference({
    xpath: `//*[local-name(.)='${localName}' and @ID='${id}']`,
    transforms: [ALGORITHMS.enveloped, ALGORITHMS.excC14n],
    digestAlgorithm: ALGORITHMS.sha256,
  });
  signed.computeSignature(xml, {
    prefix: 'ds',
    location: { reference: `//*[local-name(.)='${localName}' and @ID='${id}']/*[local-name(.)='Issuer']`, action: 'after' },
  });
  return signed.getSignedXml();
}

function only(parent: Element, localName: string): Element {
  const found = children(parent, SAML_NS.dsig, localName);
  if (found.length !== 1) throw new SamlRefused(`the signature must hold exactly one ${localName}`);
  return found[0]!;
}

/** The signature's shape, as described above; throws SamlRefused when it is anything else. */
function checkSignatureShape(root: Element, signature: Element): void {
  const signedInfo = only(signature, 'SignedInfo');
  const c14n = only(signedInfo, 'CanonicalizationMethod').getAttribute('Algorithm') ?? '';
  if (c14n !== ALGORITHMS.excC14n) throw new SamlRefused('the signature must use exclusive canonicalization without comments');
  const method = only(signedInfo, 'SignatureMethod').getAttribute('Algorithm') ?? '';
  if (!SIGNATURE_METHODS[method]) throw new SamlRefused('the signature algorithm must be RSA-SHA256 or RSA-SHA512');
  const reference = only(signedInfo, 'Reference');
  const id = root.getAttribute('ID');
  if (!id || reference.getAttribute('URI') !== `#${id}`) throw new SamlRefused('the signature must reference the message itself');
  const transforms = children(reference, SAML_NS.dsig, 'Transforms')[0];
  for (const transform of transforms ? children(transforms, SAML_NS.dsig, 'Transform') : []) {
    if (!TRANSFORMS.has(transform.getAttribute('Algorithm') ?? '')) throw new SamlRefused('the signature uses a transform that is not accepted');
  }
  if (!DIGEST_METHODS.has(only(reference, 'DigestMethod').getAttribute('Algorithm') ?? '')) throw new SamlRefused('the digest must be SHA-256 or SHA-512');
}

/**
 * Verifies the enveloped signature of the message `root` (parsed from
 * `xml`) with one of `certificates` (base64 DER), and answers the signed
 * bytes (the message without its signature, canonical), for the caller to
 * read the message from. Throws SamlRefused on anything but a good signature.
 */
export function verifiedMessage(xml: string, root: Element, certificates: string[]): string {
  const signatures = children(root, SAML_NS.dsig, 'Signature');
  if (signatures.length !== 1) throw new SamlRefused('the message must carry exactly one signature');
  checkSignatureShape(root, signatures[0]!);
  for (const certificate of certificates) {
    const verifier = new SignedXml({ publicCert: pemOf(certificate), getCertFromKeyInfo: () => null });
    verifier.loadSignature(signatures[0]!);
    let valid = false;
    try {
      valid = verifier.checkSignature(xml);
    } catch {
      valid = false;
    }
    const references = valid ? verifier.getSignedReferences() : [];
    if (references.length === 1) return references[0]!;
  }
  throw new SamlRefused('the signature does not verify with the service provider’s certificate');
}

/**
 * The HTTP-Redirect binding's signature (SAML 2.0 Bindings 3.4.4.1): over
 * `SAMLRequest=…&RelayState=…&SigAlg=…` exactly as the URL carried them.
 */
export function verifyRedirectSignature(signedOctets: string, sigAlg: string, signature: string, certificates: string[]): boolean {
  const hash = SIGNATURE_METHODS[sigAlg];
  if (!hash) return false;
  const bytes = Buffer.from(signature, 'base64');
  return certificates.some((certificate) => {
    const key = new X509Certificate(Buffer.from(certificate, 'base64')).publicKey;
    return createVerify(hash).update(signedOctets, 'utf8').verify(key, bytes);
  });
}

/** The signature of a Redirect-binding message we send, base64, over the same octets. */
export function signRedirect(signedOctets: string, signer: SamlSigner): string {
  return sign('sha256', Buffer.from(signedOctets, 'utf8'), signer.privateKey).toString('base64');
}

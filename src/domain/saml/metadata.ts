import { X509Certificate } from 'node:crypto';
import { METADATA_LIMITS, SAML_NS, SamlRefused, children, isElement, onlyChild, parseStrictXml, textOf } from './xml.ts';

// What the IdP takes from a service provider's metadata (SAML 2.0
// Metadata, saml-metadata-2.0-os 2.4.4): its entityID, where responses may
// go (AssertionConsumerService), where logout answers go
// (SingleLogoutService), the certificates its signatures are checked with,
// and whether it promises to sign its requests (AuthnRequestsSigned).

export const BINDINGS = {
  post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
  redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
} as const;

export interface Endpoint {
  binding: string;
  location: string;
  /** AssertionConsumerService only. */
  index?: number;
  isDefault?: boolean;
  /** SingleLogoutService only: where responses go when not `location`. */
  responseLocation?: string;
}

export interface SpMetadata {
  entityId: string;
  /** Every AssertionConsumerService, in document order. */
  acs: Endpoint[];
  slo: Endpoint[];
  /** Signing certificates, base64 DER. */
  certificates: string[];
  /** Certificates of KeyDescriptors marked use="encryption": assertions are encrypted for the first (docs/saml.md). */
  encryptionCertificates: string[];
  authnRequestsSigned: boolean;
}

/** A problem with the metadata; `message` names what is wrong. */
export class MetadataProblem extends Error {
  override name = 'MetadataProblem';
}

function httpUrl(value: string | null, what: string): string {
  const url = value ? URL.parse(value) : null;
  if (!value || !url || (url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname || value.includes('#') || value.length > 2000)
    throw new MetadataProblem(`${what} must be an absolute http(s) URL without fragment`);
  return value;
}

function endpoints(sp: Element, localName: string): Endpoint[] {
  return children(sp, SAML_NS.metadata, localName).map((element) => {
    const binding = element.getAttribute('Binding') ?? '';
    if (!binding) throw new MetadataProblem(`${localName} has no Binding`);
    const endpoint: Endpoint = { binding, location: httpUrl(element.getAttribute('Location'), `${localName} Location`) };
    const index = element.getAttribute('index');
    if (index !== null && index !== '') {
      if (!/^\d{1,5}$/.test(index)) throw new MetadataProblem(`${localName} index must be a number`);
      endpoint.index = Number(index);
    }
    if (element.getAttribute('isDefault') === 'true') endpoint.isDefault = true;
    const responseLocation = element.getAttribute('ResponseLocation');
    if (responseLocation) endpoint.responseLocation = httpUrl(responseLocation, `${localName} ResponseLocation`);
    return endpoint;
  });
}

/** The certificates (base64 DER) of a role descriptor's KeyDescriptors for `wanted`; one that is no X.509 certificate is a MetadataProblem. */
export function keyDescriptorCertificates(role: Element, wanted: 'signing' | 'encryption'): string[] {
  const found: string[] = [];
  for (const descriptor of children(role, SAML_NS.metadata, 'KeyDescriptor')) {
    const use = descriptor.getAttribute('use');
    // A KeyDescriptor without `use` is for signing only here: encryption is asked for explicitly.
    if ((use || 'signing') !== wanted) continue;
    const keyInfo = onlyChild(descriptor, SAML_NS.dsig, 'KeyInfo');
    for (const data of keyInfo ? children(keyInfo, SAML_NS.dsig, 'X509Data') : []) {
      for (const cert of children(data, SAML_NS.dsig, 'X509Certificate')) {
        const base64 = textOf(cert).replace(/\s+/g, '');
        let parsed: X509Certificate;
        try {
          parsed = new X509Certificate(Buffer.from(base64, 'base64'));
        } catch {
          throw new MetadataProblem('an X509Certificate is not a certificate');
        }
        // Assertions are encrypted with RSA-OAEP (src/security/saml-encryption.ts).
        if (wanted === 'encryption' && parsed.publicKey.asymmetricKeyType !== 'rsa')
          throw new MetadataProblem('an encryption certificate must hold an RSA key');
        found.push(base64);
      }
    }
  }
  return found;
}

/** The SP's metadata, or MetadataProblem / SamlRefused saying what is wrong with it. */
export function parseSpMetadata(xml: string): SpMetadata {
  const root = parseStrictXml(xml, METADATA_LIMITS);
  if (!isElement(root, SAML_NS.metadata, 'EntityDescriptor')) throw new MetadataProblem('the root element must be an md:EntityDescriptor');
  const entityId = root.getAttribute('entityID') ?? '';
  if (!entityId.trim()) throw new MetadataProblem('the EntityDescriptor has no entityID');
  if (entityId.length > 1024) throw new MetadataProblem('the entityID is longer than 1024 characters');
  const sp = onlyChild(root, SAML_NS.metadata, 'SPSSODescriptor');
  if (!sp) throw new MetadataProblem('there is no SPSSODescriptor (metadata of a service provider)');
  const acs = endpoints(sp, 'AssertionConsumerService');
  if (!acs.some((endpoint) => endpoint.binding === BINDINGS.post)) throw new MetadataProblem('no AssertionConsumerService with the HTTP-POST binding');
  const authnRequestsSigned = sp.getAttribute('AuthnRequestsSigned') === 'true' || sp.getAttribute('AuthnRequestsSigned') === '1';
  const certs = keyDescriptorCertificates(sp, 'signing');
  if (authnRequestsSigned && !certs.length) throw new MetadataProblem('AuthnRequestsSigned is true but there is no signing certificate');
  return {
    entityId,
    acs,
    slo: endpoints(sp, 'SingleLogoutService'),
    certificates: certs,
    encryptionCertificates: keyDescriptorCertificates(sp, 'encryption'),
    authnRequestsSigned,
  };
}

export { SamlRefused };

import { BINDINGS, MetadataProblem, keyDescriptorCertificates } from './metadata.ts';
import { METADATA_LIMITS, SAML_NS, children, isElement, onlyChild, parseStrictXml } from './xml.ts';

// What the service provider takes from an external IdP's metadata
// (saml-metadata-2.0-os 2.4.3 IDPSSODescriptor): its entityID, where its
// single sign-on service listens on each binding, and the certificates its
// responses are signed with. Parsed under the same strict rules as every
// SAML document (./xml.ts): no DTD, bounded size.

export interface IdpMetadata {
  entityId: string;
  /** SingleSignOnService Location per binding (HTTP-Redirect, HTTP-POST). */
  sso: { redirect?: string; post?: string };
  /** Signing certificates, base64 DER. */
  certificates: string[];
}

function httpUrl(value: string | null): string | undefined {
  const url = value ? URL.parse(value) : null;
  if (!value || !url || (url.protocol !== 'https:' && url.protocol !== 'http:') || value.includes('#') || value.length > 2000) return undefined;
  return value;
}

/** The IdP's metadata, or MetadataProblem / SamlRefused saying what is wrong with it. */
export function parseIdpMetadata(xml: string): IdpMetadata {
  const root = parseStrictXml(xml, METADATA_LIMITS);
  if (!isElement(root, SAML_NS.metadata, 'EntityDescriptor')) throw new MetadataProblem('the root element must be an md:EntityDescriptor');
  const entityId = root.getAttribute('entityID') ?? '';
  if (!entityId.trim() || entityId.length > 1024) throw new MetadataProblem('the EntityDescriptor has no entityID (or one over 1024 characters)');
  const descriptor = onlyChild(root, SAML_NS.metadata, 'IDPSSODescriptor');
  if (!descriptor) throw new MetadataProblem('there is no IDPSSODescriptor (metadata of an identity provider)');
  const sso: IdpMetadata['sso'] = {};
  for (const service of children(descriptor, SAML_NS.metadata, 'SingleSignOnService')) {
    const location = httpUrl(service.getAttribute('Location'));
    const binding = service.getAttribute('Binding');
    if (!location) continue;
    if (binding === BINDINGS.redirect) sso.redirect ??= location;
    if (binding === BINDINGS.post) sso.post ??= location;
  }
  if (!sso.redirect && !sso.post) throw new MetadataProblem('there is no SingleSignOnService with the HTTP-Redirect or HTTP-POST binding');
  const certificates = keyDescriptorCertificates(descriptor, 'signing');
  if (!certificates.length) throw new MetadataProblem('there is no signing certificate');
  return { entityId, sso, certificates };
}

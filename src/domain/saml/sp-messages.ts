import { DECRYPTION_ALGORITHMS } from '../../security/saml-decryption.ts';
import { BINDINGS } from './metadata.ts';
import { SAML_NS, escapeXml as x } from './xml.ts';

// The XML the service provider writes (SAML 2.0 Metadata 2.4.4 and Core
// 3.4.1): its metadata for the external IdP, and the AuthnRequest that
// sends the user there.

export interface SpEndpoints {
  /** The metadata URL, which is the entityID too. */
  entityId: string;
  acs: string;
}

/** Our SP's metadata URL (also its entityID) and ACS for the provider `idpId`. */
export function spEndpoints(issuer: string, idpId: string): SpEndpoints {
  const base = `${issuer}/idps/${encodeURIComponent(idpId)}/saml`;
  return { entityId: `${base}/metadata`, acs: `${base}/acs` };
}

const instant = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * The encryption methods the SP takes, preferred first (Metadata 2.4.1.1):
 * IdPs that read them (Shibboleth) pick GCM; CBC for those that only write
 * it (SimpleSAMLphp, ADFS), RSA-OAEP for the key (src/security/saml-decryption.ts).
 */
const ENCRYPTION_METHODS = [
  DECRYPTION_ALGORITHMS.aes256Gcm,
  DECRYPTION_ALGORITHMS.aes128Gcm,
  DECRYPTION_ALGORITHMS.aes256Cbc,
  DECRYPTION_ALGORITHMS.aes128Cbc,
  DECRYPTION_ALGORITHMS.rsaOaep,
  DECRYPTION_ALGORITHMS.rsaOaepMgf1p,
];

/**
 * The SP's metadata: its certificate (base64 DER), for signing and for
 * encryption (one key per provider), the ACS on HTTP-POST, the NameID
 * format it asks for.
 */
export function spMetadataXml(sp: SpEndpoints, certificate: string, authnRequestsSigned: boolean, nameIdFormat: string): string {
  const keyInfo = `<ds:KeyInfo xmlns:ds="${SAML_NS.dsig}"><ds:X509Data><ds:X509Certificate>${certificate}</ds:X509Certificate></ds:X509Data></ds:KeyInfo>`;
  const methods = ENCRYPTION_METHODS.map((algorithm) => `<md:EncryptionMethod Algorithm="${algorithm}"/>`).join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="${SAML_NS.metadata}" entityID="${x(sp.entityId)}"><md:SPSSODescriptor AuthnRequestsSigned="${authnRequestsSigned}" WantAssertionsSigned="true" protocolSupportEnumeration="${SAML_NS.protocol}"><md:KeyDescriptor use="signing">${keyInfo}</md:KeyDescriptor><md:KeyDescriptor use="encryption">${keyInfo}${methods}</md:KeyDescriptor><md:NameIDFormat>${x(nameIdFormat)}</md:NameIDFormat><md:AssertionConsumerService Binding="${BINDINGS.post}" Location="${x(sp.acs)}" index="0" isDefault="true"/></md:SPSSODescriptor></md:EntityDescriptor>`;
}

export interface AuthnRequestInput {
  id: string;
  sp: SpEndpoints;
  destination: string;
  nameIdFormat: string;
  now?: Date;
}

/** An AuthnRequest asking for a response on the HTTP-POST binding at our ACS. */
export function authnRequestXml(input: AuthnRequestInput): string {
  const now = input.now ?? new Date();
  return (
    `<samlp:AuthnRequest xmlns:samlp="${SAML_NS.protocol}" xmlns:saml="${SAML_NS.assertion}" ID="${x(input.id)}" Version="2.0" IssueInstant="${instant(now)}" Destination="${x(input.destination)}" ProtocolBinding="${BINDINGS.post}" AssertionConsumerServiceURL="${x(input.sp.acs)}">` +
    `<saml:Issuer>${x(input.sp.entityId)}</saml:Issuer><samlp:NameIDPolicy Format="${x(input.nameIdFormat)}" AllowCreate="true"/></samlp:AuthnRequest>`
  );
}

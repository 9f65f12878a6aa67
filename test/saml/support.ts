import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { constants, createDecipheriv, createSign, privateDecrypt, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { SignedXml } from 'xml-crypto';
import { tempDir } from '../support/server.ts';

// A service provider driven by hand, for the refusals a real SP never
// sends: its key and certificate (openssl), its metadata, and requests
// written, signed and encoded here.

export const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';

export interface HandSp {
  entityId: string;
  acs: string;
  keyPem: string;
  /** base64 DER */
  certificate: string;
  metadataXml: string;
}

/** A key pair and a self-signed certificate made by openssl. */
export function opensslKeyPair(name: string): { keyPem: string; certificate: string } {
  const dir = tempDir('saml-sp-');
  const made = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-days', '2', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
    { encoding: 'utf8' },
  );
  if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`);
  const certPem = readFileSync(join(dir, 'cert.pem'), 'utf8');
  return { keyPem: readFileSync(join(dir, 'key.pem'), 'utf8'), certificate: certPem.replace(/-----[A-Z ]+-----|\s+/g, '') };
}

export function handSp(name: string, options: { signsRequests?: boolean; singleLogout?: boolean } = {}): HandSp {
  const entityId = `https://${name}.example.test/saml`;
  const acs = `https://${name}.example.test/acs`;
  const { keyPem, certificate } = opensslKeyPair(name);
  const metadataXml = `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <!-- a comment is fine in metadata -->
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" AuthnRequestsSigned="${options.signsRequests ?? true}">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certificate}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    ${options.singleLogout === false ? '' : `<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://${name}.example.test/slo"/>`}
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${acs}" index="0" isDefault="true"/>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${acs}/second" index="1"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>`;
  return { entityId, acs, keyPem, certificate, metadataXml };
}

export interface RequestFields {
  id?: string;
  issuer: string;
  acs?: string;
  issueInstant?: Date;
  destination?: string;
  /** Raw XML put before the root element (a DOCTYPE, say). */
  prolog?: string;
  /** Raw XML put inside the root, after the Issuer. */
  inner?: string;
  nameIdFormat?: string;
  /** Further attributes of the root, written as they are (` IsPassive="true"`). */
  attributes?: string;
}

export function authnRequestXml(fields: RequestFields): string {
  const id = fields.id ?? `_${randomBytes(12).toString('hex')}`;
  const acs = fields.acs ? ` AssertionConsumerServiceURL="${fields.acs}" ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"` : '';
  const destination = fields.destination ? ` Destination="${fields.destination}"` : '';
  const policy = fields.nameIdFormat ? `<samlp:NameIDPolicy Format="${fields.nameIdFormat}" AllowCreate="true"/>` : '';
  return `${fields.prolog ?? ''}<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${id}" Version="2.0" IssueInstant="${(fields.issueInstant ?? new Date()).toISOString()}"${destination}${acs}${fields.attributes ?? ''}><saml:Issuer>${fields.issuer}</saml:Issuer>${fields.inner ?? ''}${policy}</samlp:AuthnRequest>`;
}

export function logoutRequestXml(fields: { id: string; issuer: string; nameId: string; sessionIndex: string }): string {
  return `<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${fields.id}" Version="2.0" IssueInstant="${new Date().toISOString()}"><saml:Issuer>${fields.issuer}</saml:Issuer><saml:NameID>${fields.nameId}</saml:NameID><samlp:SessionIndex>${fields.sessionIndex}</samlp:SessionIndex></samlp:LogoutRequest>`;
}

/** An SP's answer to the IdP's LogoutRequest `inResponseTo` (SAML 2.0 Core 3.7.2). */
export function logoutResponseXml(fields: { id: string; issuer: string; inResponseTo: string; status?: string; destination?: string }): string {
  const destination = fields.destination ? ` Destination="${fields.destination}"` : '';
  const status = fields.status ?? 'urn:oasis:names:tc:SAML:2.0:status:Success';
  return `<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${fields.id}" Version="2.0" IssueInstant="${new Date().toISOString()}" InResponseTo="${fields.inResponseTo}"${destination}><saml:Issuer>${fields.issuer}</saml:Issuer><samlp:Status><samlp:StatusCode Value="${status}"/></samlp:Status></samlp:LogoutResponse>`;
}

/** The HTTP-Redirect query of `xml` (a request, unless `field` says otherwise), signed with `keyPem` unless it is undefined. */
export function redirectQuery(xml: string, keyPem: string | undefined, relayState?: string, field: 'SAMLRequest' | 'SAMLResponse' = 'SAMLRequest'): string {
  const parts = [`${field}=${encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString('base64'))}`];
  if (relayState !== undefined) parts.push(`RelayState=${encodeURIComponent(relayState)}`);
  if (keyPem === undefined) return parts.join('&');
  parts.push(`SigAlg=${encodeURIComponent(RSA_SHA256)}`);
  const octets = parts.join('&');
  const signature = createSign('sha256').update(octets).sign(keyPem, 'base64');
  return `${octets}&Signature=${encodeURIComponent(signature)}`;
}

/** `xml` with its root (`id`) signed, enveloped, as an SP signs for the POST binding. */
export function signedPostXml(xml: string, id: string, keyPem: string): string {
  const signer = new SignedXml({ privateKey: keyPem, signatureAlgorithm: RSA_SHA256, canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#' });
  signer.addReference({
    xpath: `//*[@ID='${id}']`,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  signer.computeSignature(xml, { prefix: 'ds', location: { reference: `//*[@ID='${id}']/*[local-name(.)='Issuer']`, action: 'after' } });
  return signer.getSignedXml();
}

/** The assertion of a response whose assertion is encrypted (AES-256-GCM, the key wrapped with RSA-OAEP), decrypted with the SP's key. */
export function decryptAssertion(responseXml: string, keyPem: string): string {
  assert.match(responseXml, /<xenc:EncryptionMethod Algorithm="http:\/\/www\.w3\.org\/2009\/xmlenc11#aes256-gcm"\/>/);
  const [wrapped, data] = [...responseXml.matchAll(/<xenc:CipherValue>([^<]+)<\/xenc:CipherValue>/g)].map((m) => Buffer.from(m[1]!, 'base64'));
  const key = privateDecrypt({ key: keyPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, wrapped!);
  const decipher = createDecipheriv('aes-256-gcm', key, data!.subarray(0, 12));
  decipher.setAuthTag(data!.subarray(data!.length - 16));
  return Buffer.concat([decipher.update(data!.subarray(12, data!.length - 16)), decipher.final()]).toString('utf8');
}

import type { FieldViolation } from '../errors.ts';
import { parseIdpMetadata, type IdpMetadata } from './idp-metadata.ts';
import { samlSourceViolations } from './sp-kind.ts';

/** The metadata XML of a base64 field, undefined when it is no UTF-8 text. */
export function decodeMetadata(base64: string): string | undefined {
  const text = Buffer.from(base64.replace(/\s+/g, ''), 'base64').toString('utf8');
  return text && !text.includes('\uFFFD') ? text : undefined;
}

/** The IdP metadata given as base64 XML; throws MetadataProblem or SamlRefused saying what is wrong. */
export function givenIdpMetadata(base64: string): IdpMetadata {
  const text = decodeMetadata(base64);
  if (!text) throw new Error('must be base64 of UTF-8 XML');
  return parseIdpMetadata(text);
}

/** A saml body's metadata: one source, and given XML an IdP's usable metadata (a URL is read by the command). */
export function samlViolations(body: Record<string, unknown>): FieldViolation[] {
  const source = samlSourceViolations(body);
  if (source.length || typeof body.metadataXml !== 'string') return source;
  try {
    givenIdpMetadata(body.metadataXml);
    return [];
  } catch (err) {
    return [{ field: 'metadataXml', description: `is not usable IdP metadata: ${(err as Error).message}` }];
  }
}

import { generateKeyPairSync } from 'node:crypto';
import type { FieldViolation } from '../errors.ts';
import { parseIdpMetadata } from './idp-metadata.ts';
import { SP_NAMEID_FORMATS } from './sp-messages.ts';

/**
 * The `saml` provider kind (docs/idps.md, SAML): the service is the SAML
 * 2.0 service provider of an external IdP. Its fields, the rules a schema
 * cannot say, and the provider's own signing key, made at creation.
 */

export const SAML_BINDINGS = ['SAML_BINDING_POST', 'SAML_BINDING_REDIRECT'] as const;

/** What a sign-in needs of the provider. */
export interface SamlSettings {
  /** The IdP's metadata: given as XML, or fetched from a URL at each sign-in. */
  metadata: { xml: string } | { url: string };
  binding: (typeof SAML_BINDINGS)[number];
  withSignedRequest: boolean;
  /** The NameID format URI asked for. */
  nameIdFormat: string;
  /** The attribute that names the user when the IdP answers a transient NameID. */
  transientMappingAttributeName: string;
}

/** 512 KiB of metadata (the strict parser's limit), in base64. */
const MAX_METADATA_BASE64 = 700_000;

export const SAML_PROPERTIES: Record<string, object> = {
  metadataXml: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_METADATA_BASE64,
    pattern: '^[A-Za-z0-9+/\\s]*={0,2}\\s*$',
    description: 'must be the IdP metadata XML in base64',
  },
  metadataUrl: { type: 'string', minLength: 1, maxLength: 2048 },
  binding: { type: 'string', enum: [...SAML_BINDINGS] },
  withSignedRequest: { type: 'boolean' },
  nameIdFormat: { type: 'string', enum: Object.keys(SP_NAMEID_FORMATS) },
  transientMappingAttributeName: { type: 'string', maxLength: 200, pattern: '^[\\x21-\\x7e]*$', description: 'must be an attribute name' },
};

export const SAML_DEFAULTS = {
  binding: 'SAML_BINDING_REDIRECT',
  withSignedRequest: false,
  nameIdFormat: 'SAML_NAME_ID_FORMAT_PERSISTENT',
  transientMappingAttributeName: '',
};

/** The metadata XML of a base64 field, undefined when it is no UTF-8 text. */
export function decodeMetadata(base64: string): string | undefined {
  const text = Buffer.from(base64.replace(/\s+/g, ''), 'base64').toString('utf8');
  return text && !text.includes('\uFFFD') ? text : undefined;
}

/** Exactly one of metadataXml and metadataUrl; given XML must be an IdP's usable metadata. */
export function samlViolations(body: Record<string, unknown>): FieldViolation[] {
  const xml = body.metadataXml;
  const url = body.metadataUrl;
  if (xml === undefined && url === undefined) return [{ field: 'metadataXml', description: 'metadataXml or metadataUrl is required' }];
  if (xml !== undefined && url !== undefined) return [{ field: 'metadataUrl', description: 'must not be given together with metadataXml' }];
  if (typeof xml !== 'string') return [];
  const text = decodeMetadata(xml);
  if (!text) return [{ field: 'metadataXml', description: 'must be base64 of UTF-8 XML' }];
  try {
    parseIdpMetadata(text);
    return [];
  } catch (err) {
    return [{ field: 'metadataXml', description: `is not usable IdP metadata: ${(err as Error).message}` }];
  }
}

const str = (value: unknown, fallback: string) => (typeof value === 'string' ? value : fallback);

export function samlSettingsOf(config: Record<string, unknown>): SamlSettings {
  const xml = typeof config.metadataXml === 'string' ? decodeMetadata(config.metadataXml) : undefined;
  const binding = config.binding === 'SAML_BINDING_POST' ? 'SAML_BINDING_POST' : 'SAML_BINDING_REDIRECT';
  return {
    metadata: xml !== undefined ? { xml } : { url: str(config.metadataUrl, '') },
    binding,
    withSignedRequest: config.withSignedRequest === true,
    nameIdFormat: SP_NAMEID_FORMATS[str(config.nameIdFormat, SAML_DEFAULTS.nameIdFormat)] ?? SP_NAMEID_FORMATS.SAML_NAME_ID_FORMAT_PERSISTENT!,
    transientMappingAttributeName: str(config.transientMappingAttributeName, ''),
  };
}

/** A new provider's signing key: RSA 2048, its private JWK as JSON (sealed at rest like every provider secret). */
export function newSpSigningKey(): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return JSON.stringify(privateKey.export({ format: 'jwk' }));
}

import type { FieldViolation } from '../errors.ts';

/**
 * The `saml` provider kind (docs/idps.md, SAML): the service is the SAML
 * 2.0 service provider of an external IdP. Its fields and what a sign-in
 * needs of them. Free of Node and XML modules: the console bundles the
 * kinds (src/domain/idps.ts); the metadata itself is checked by
 * ./sp-metadata-rule.ts.
 */

export const SAML_BINDINGS = ['SAML_BINDING_POST', 'SAML_BINDING_REDIRECT'] as const;

/** The API's NameID formats and their URIs (SAML 2.0 Core 8.3). */
export const SP_NAMEID_FORMATS: Record<string, string> = {
  SAML_NAME_ID_FORMAT_PERSISTENT: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  SAML_NAME_ID_FORMAT_EMAIL_ADDRESS: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  SAML_NAME_ID_FORMAT_TRANSIENT: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
  SAML_NAME_ID_FORMAT_UNSPECIFIED: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
};

/** What a sign-in needs of the provider. */
export interface SamlSettings {
  /** The IdP's metadata: given as base64 XML, or fetched from a URL at each sign-in. */
  metadata: { base64: string } | { url: string };
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

/** Exactly one of metadataXml and metadataUrl. */
export function samlSourceViolations(body: Record<string, unknown>): FieldViolation[] {
  if (body.metadataXml === undefined && body.metadataUrl === undefined)
    return [{ field: 'metadataXml', description: 'metadataXml or metadataUrl is required' }];
  if (body.metadataXml !== undefined && body.metadataUrl !== undefined)
    return [{ field: 'metadataUrl', description: 'must not be given together with metadataXml' }];
  return [];
}

const str = (value: unknown, fallback: string) => (typeof value === 'string' ? value : fallback);

export function samlSettingsOf(config: Record<string, unknown>): SamlSettings {
  return {
    metadata: typeof config.metadataXml === 'string' ? { base64: config.metadataXml } : { url: str(config.metadataUrl, '') },
    binding: config.binding === 'SAML_BINDING_POST' ? 'SAML_BINDING_POST' : 'SAML_BINDING_REDIRECT',
    withSignedRequest: config.withSignedRequest === true,
    nameIdFormat: SP_NAMEID_FORMATS[str(config.nameIdFormat, SAML_DEFAULTS.nameIdFormat)] ?? SP_NAMEID_FORMATS.SAML_NAME_ID_FORMAT_PERSISTENT!,
    transientMappingAttributeName: str(config.transientMappingAttributeName, ''),
  };
}

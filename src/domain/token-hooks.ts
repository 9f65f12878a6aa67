import { METADATA_KEY, metadataValue } from './user-metadata.ts';

// Token hooks (docs/actions.md, "Token hooks"): restCall targets the
// service asks, at token issuance, for claims to add and user metadata to
// set; and before a SAML response, for attributes to add. Plain rules, no I/O.

export type ClaimHookFunction = 'preuserinfo' | 'preaccesstoken';
export type HookFunction = ClaimHookFunction | 'presamlresponse';

/**
 * Claims the protocol or the service owns: a hook's value for one of them
 * is dropped. Besides the JWT and OIDC claims (RFC 7519 4.1, OIDC Core 2,
 * RFC 9068 2.2, RFC 9449 6, RFC 8693 4.1), the fields an introspection
 * answer means something by (RFC 7662 2.2) and our own `urn:service:iam:`
 * claims.
 */
const RESERVED_CLAIMS: ReadonlySet<string> = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'nbf',
  'jti',
  'nonce',
  'acr',
  'amr',
  'azp',
  'auth_time',
  'at_hash',
  'c_hash',
  's_hash',
  'sid',
  'cnf',
  'act',
  'scope',
  'client_id',
  'active',
  'token_type',
  'username',
]);
const RESERVED_PREFIX = 'urn:service:iam:';

/** Reserved, or a name that would reach an object's prototype rather than a claim. */
export function reservedClaim(name: string): boolean {
  return RESERVED_CLAIMS.has(name) || name.startsWith(RESERVED_PREFIX) || name === '__proto__';
}

/** The most entries a hook's answer may hold in each list: a claim set is no bulk store. */
export const MAX_HOOK_ENTRIES = 100;

const setUserMetadataSchema = {
  type: 'array',
  maxItems: MAX_HOOK_ENTRIES,
  items: {
    type: 'object',
    required: ['key', 'value'],
    properties: { key: { type: 'string', pattern: METADATA_KEY.source }, value: { type: 'string' } },
  },
} as const;

/** A hook's answer as its schema admits it (ajv checks the types first). */
export const hookAnswerSchema = {
  type: 'object',
  properties: {
    append_claims: {
      type: 'array',
      maxItems: MAX_HOOK_ENTRIES,
      items: { type: 'object', required: ['key', 'value'], properties: { key: { type: 'string', minLength: 1, maxLength: 200 }, value: {} } },
    },
    set_user_metadata: setUserMetadataSchema,
  },
} as const;

/** An attribute's NameFormat is a URI (SAML 2.0 Core 2.7.3.1); the usual ones are `attrname-format:basic` and `:uri`. */
const URI = '^[A-Za-z][A-Za-z0-9+.-]*:[^\\s<>"]+$';

/** A presamlresponse hook's answer (ZITADEL's shape): attributes to add, user metadata to set. */
export const samlHookAnswerSchema = {
  type: 'object',
  properties: {
    append_attribute: {
      type: 'array',
      maxItems: MAX_HOOK_ENTRIES,
      items: {
        type: 'object',
        required: ['name', 'value'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 200 },
          nameFormat: { type: 'string', maxLength: 200, pattern: URI },
          value: { type: 'array', maxItems: MAX_HOOK_ENTRIES, items: { type: 'string', maxLength: 4096 } },
        },
      },
    },
    set_user_metadata: setUserMetadataSchema,
  },
} as const;

export interface HookAnswer {
  append_claims?: Array<{ key: string; value: unknown }>;
  set_user_metadata?: Array<{ key: string; value: string }>;
}

export interface SamlHookAnswer {
  append_attribute?: Array<{ name: string; nameFormat?: string; value: string[] }>;
  set_user_metadata?: Array<{ key: string; value: string }>;
}

export interface ReadAnswer {
  /** Claims to add, the reserved ones already left out. */
  claims: Record<string, unknown>;
  /** Names of the reserved claims the hook tried to set. */
  dropped: string[];
  /** Metadata to write, values decoded. */
  metadata: Array<{ key: string; value: Buffer }>;
}

/** The metadata values decoded, or why one cannot be (no base64 of at most 4 KiB). */
function readMetadata(entries: Array<{ key: string; value: string }> | undefined): ReadAnswer['metadata'] | string {
  const metadata: ReadAnswer['metadata'] = [];
  for (const [i, { key, value }] of (entries ?? []).entries()) {
    const bytes = metadataValue(value);
    if (typeof bytes === 'string') return `set_user_metadata[${i}].value ${bytes}`;
    metadata.push({ key, value: bytes });
  }
  return metadata;
}

/** What a schema-checked answer asks for, or why it cannot be used. */
export function readAnswer(answer: HookAnswer): ReadAnswer | string {
  const claims: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const { key, value } of answer.append_claims ?? []) {
    if (reservedClaim(key)) dropped.push(key);
    else claims[key] = value;
  }
  const metadata = readMetadata(answer.set_user_metadata);
  if (typeof metadata === 'string') return metadata;
  return { claims, dropped, metadata };
}

/** An attribute a presamlresponse hook adds to the assertion. */
export interface HookAttribute {
  name: string;
  nameFormat: string;
  values: string[];
}

export const BASIC_NAME_FORMAT = 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic';

/**
 * The attributes the response carries itself (docs/saml.md, "What the SP
 * gets"): an SP trusts them as the IdP's word on who signed in, so a hook
 * adds attributes beside them and never replaces one.
 */
export const OWN_SAML_ATTRIBUTES: ReadonlySet<string> = new Set(['Email', 'FirstName', 'SurName', 'FullName', 'UserName', 'UserID', 'Roles']);

export interface ReadSamlAnswer {
  /** By name: a later entry replaces an earlier one of the same name. */
  attributes: Map<string, HookAttribute>;
  /** Names of the service's own attributes the hook tried to set. */
  dropped: string[];
  metadata: ReadAnswer['metadata'];
}

/** What a schema-checked presamlresponse answer asks for, or why it cannot be used. */
export function readSamlAnswer(answer: SamlHookAnswer): ReadSamlAnswer | string {
  const attributes = new Map<string, HookAttribute>();
  const dropped: string[] = [];
  for (const { name, nameFormat, value } of answer.append_attribute ?? []) {
    if (OWN_SAML_ATTRIBUTES.has(name)) dropped.push(name);
    else attributes.set(name, { name, nameFormat: nameFormat || BASIC_NAME_FORMAT, values: value });
  }
  const metadata = readMetadata(answer.set_user_metadata);
  if (typeof metadata === 'string') return metadata;
  return { attributes, dropped, metadata };
}

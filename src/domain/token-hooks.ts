import { METADATA_KEY, metadataValue } from './user-metadata.ts';

// Token hooks (docs/actions.md, "Token hooks"): restCall targets the
// service asks, at token issuance, for claims to add and user metadata to
// set. Plain rules, no I/O.

export type HookFunction = 'preuserinfo' | 'preaccesstoken';

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

/** A hook's answer as its schema admits it (ajv checks the types first). */
export const hookAnswerSchema = {
  type: 'object',
  properties: {
    append_claims: {
      type: 'array',
      maxItems: MAX_HOOK_ENTRIES,
      items: { type: 'object', required: ['key', 'value'], properties: { key: { type: 'string', minLength: 1, maxLength: 200 }, value: {} } },
    },
    set_user_metadata: {
      type: 'array',
      maxItems: MAX_HOOK_ENTRIES,
      items: {
        type: 'object',
        required: ['key', 'value'],
        properties: { key: { type: 'string', pattern: METADATA_KEY.source }, value: { type: 'string' } },
      },
    },
  },
} as const;

export interface HookAnswer {
  append_claims?: Array<{ key: string; value: unknown }>;
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

/** What a schema-checked answer asks for, or why it cannot be used (a metadata value that is no base64 of at most 4 KiB). */
export function readAnswer(answer: HookAnswer): ReadAnswer | string {
  const claims: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const { key, value } of answer.append_claims ?? []) {
    if (reservedClaim(key)) dropped.push(key);
    else claims[key] = value;
  }
  const metadata: ReadAnswer['metadata'] = [];
  for (const [i, { key, value }] of (answer.set_user_metadata ?? []).entries()) {
    const bytes = metadataValue(value);
    if (typeof bytes === 'string') return `set_user_metadata[${i}].value ${bytes}`;
    metadata.push({ key, value: bytes });
  }
  return { claims, dropped, metadata };
}

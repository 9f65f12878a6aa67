import { upstreamUrlViolations, type IdpKind } from '../domain/idps.ts';
import { ldapRootCaViolations } from '../domain/ldap-root-ca.ts';
import { samlViolations } from '../domain/saml/sp-metadata-rule.ts';

/** The bodies of `…/idps/…` and `…/policies/login/idps` (docs/api/idps.md). */

const NAME = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  pattern: '^[^\\u0000-\\u001f]*$',
  description: 'must be 1 to 200 characters, no control characters',
};

const PROVIDER_OPTIONS = {
  type: 'object',
  additionalProperties: false,
  properties: {
    isLinkingAllowed: { type: 'boolean' },
    isCreationAllowed: { type: 'boolean' },
    isAutoCreation: { type: 'boolean' },
    isAutoUpdate: { type: 'boolean' },
  },
};

/** A kind's create body (every required field) or change body (the secret may be left out: it is kept). */
export function idpSchema(kind: IdpKind, change: boolean): object {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['name', ...kind.required.filter((field) => !(change && field === kind.secretField))],
    properties: { name: NAME, providerOptions: PROVIDER_OPTIONS, ...kind.properties },
  };
}

/**
 * Rules a schema cannot say: the URL fields (an LDAP provider's servers
 * too) must be usable upstream addresses; an LDAP provider's `rootCa` must
 * be certificates; a SAML provider's metadata must be an IdP's.
 */
export const idpRule = (kind: IdpKind) => (body: Record<string, unknown>) => [
  ...upstreamUrlViolations(body),
  ...(kind.name === 'ldap' ? ldapRootCaViolations(body) : []),
  ...(kind.name === 'saml' ? samlViolations(body) : []),
];

export const policyIdpSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['idpId'],
  properties: { idpId: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description: 'must be an identity provider id' } },
} as const;

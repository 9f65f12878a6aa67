// Scopes and the claims each one releases (OIDC Core 5.4). The engine drops any
// claim not mapped here, so every claim we ever issue must be listed.

export const RESOURCE_OWNER_CLAIMS = [
  'urn:service:iam:user:resourceowner:id',
  'urn:service:iam:user:resourceowner:name',
  'urn:service:iam:user:resourceowner:primary_domain',
] as const;

/** The project roles claim (docs/api/users.md, user grants), and the scope that asks for it. */
export const ROLES_CLAIM = 'urn:service:iam:org:project:roles';
export const ROLES_SCOPE = ROLES_CLAIM;
/** Puts this service's management API into the token's audience (docs/security.md). */
export const API_SCOPE = 'urn:service:iam:api';
/** A user's metadata `{key: base64 value}` (docs/api/users.md, "Metadata"), and the scope that asks for it. */
export const METADATA_CLAIM = 'urn:service:iam:user:metadata';
export const METADATA_SCOPE = METADATA_CLAIM;

export const SCOPES = ['openid', 'profile', 'email', 'phone', 'address', 'offline_access', ROLES_SCOPE, API_SCOPE, METADATA_SCOPE];
export const KNOWN_SCOPES: ReadonlySet<string> = new Set(SCOPES);

export const CLAIMS_BY_SCOPE: Record<string, string[]> = {
  // The roles claim is mapped to openid so the app's role assertion can
  // release it without the roles scope; accounts.ts decides when it is there.
  // amr (RFC 8176) and acr come from the login, not the account: listed here
  // so the engine releases what the login UI records into the ID token.
  openid: ['sub', 'amr', 'acr', ...RESOURCE_OWNER_CLAIMS, ROLES_CLAIM],
  profile: ['name', 'given_name', 'family_name', 'nickname', 'preferred_username', 'locale', 'gender', 'updated_at'],
  email: ['email', 'email_verified'],
  phone: ['phone_number', 'phone_number_verified'],
  address: ['address'],
  [METADATA_SCOPE]: [METADATA_CLAIM],
};

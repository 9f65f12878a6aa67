// Scopes and the claims each one releases (SPEC 2.1). The engine drops any
// claim not mapped here, so every claim we ever issue must be listed.

export const RESOURCE_OWNER_CLAIMS = [
  'urn:service:iam:user:resourceowner:id',
  'urn:service:iam:user:resourceowner:name',
  'urn:service:iam:user:resourceowner:primary_domain',
] as const;

export const SCOPES = ['openid', 'profile', 'email', 'phone', 'address', 'offline_access'];

export const CLAIMS_BY_SCOPE: Record<string, string[]> = {
  openid: ['sub', ...RESOURCE_OWNER_CLAIMS],
  profile: ['name', 'given_name', 'family_name', 'nickname', 'preferred_username', 'locale', 'gender', 'updated_at'],
  email: ['email', 'email_verified'],
  phone: ['phone_number', 'phone_number_verified'],
  address: ['address'],
};

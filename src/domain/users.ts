export const GENDERS = ['GENDER_UNSPECIFIED', 'GENDER_FEMALE', 'GENDER_MALE', 'GENDER_DIVERSE'] as const;
export type Gender = (typeof GENDERS)[number];

/** How a machine user's access tokens look: opaque (bearer) or JWT. */
export const MACHINE_ACCESS_TOKEN_TYPES = ['ACCESS_TOKEN_TYPE_BEARER', 'ACCESS_TOKEN_TYPE_JWT'] as const;
export type MachineAccessTokenType = (typeof MACHINE_ACCESS_TOKEN_TYPES)[number];
export const DEFAULT_MACHINE_ACCESS_TOKEN_TYPE: MachineAccessTokenType = 'ACCESS_TOKEN_TYPE_BEARER';

/** When no display name is set, it is the first name followed by the last name (docs/api/orgs.md). */
export function displayNameOf(profile: { firstName: string; lastName: string; displayName?: string }): string {
  return profile.displayName?.trim() ? profile.displayName : `${profile.firstName} ${profile.lastName}`;
}

/** A login name is `userName@primaryDomain` of the user's org (docs/api/orgs.md). */
export function loginName(userName: string, primaryDomain: string): string {
  return `${userName}@${primaryDomain}`;
}

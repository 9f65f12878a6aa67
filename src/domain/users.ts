export const GENDERS = ['GENDER_UNSPECIFIED', 'GENDER_FEMALE', 'GENDER_MALE', 'GENDER_DIVERSE'] as const;
export type Gender = (typeof GENDERS)[number];

/** When no display name is set, it is the first name followed by the last name (docs/api/orgs.md). */
export function displayNameOf(profile: { firstName: string; lastName: string; displayName?: string }): string {
  return profile.displayName?.trim() ? profile.displayName : `${profile.firstName} ${profile.lastName}`;
}

/** A login name is `userName@primaryDomain` of the user's org (docs/api/orgs.md). */
export function loginName(userName: string, primaryDomain: string): string {
  return `${userName}@${primaryDomain}`;
}

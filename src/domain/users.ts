export const GENDERS = ['GENDER_UNSPECIFIED', 'GENDER_FEMALE', 'GENDER_MALE', 'GENDER_DIVERSE'] as const;
export type Gender = (typeof GENDERS)[number];

/** SEED 2.5: when no display name is set, it is the first name followed by the last name. */
export function displayNameOf(profile: { firstName: string; lastName: string; displayName?: string }): string {
  return profile.displayName?.trim() ? profile.displayName : `${profile.firstName} ${profile.lastName}`;
}

/** SPEC 2.1: a login name is `userName@primaryDomain` of the user's org. */
export function loginName(userName: string, primaryDomain: string): string {
  return `${userName}@${primaryDomain}`;
}

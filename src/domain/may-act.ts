// Who may act: the one rule every path that signs in, issues or accepts a
// token asks (the login, passkeys, the machine grants, token exchange,
// refresh, introspection, userinfo, the admin API). A user acts while it
// is active and its organization is active; an app starts sign-ins while
// its organization is active (docs/security.md, "What ends a token").
// storage/users.ts holds the same rule as SQL for the queries that find
// credentials (USER_MAY_ACT, ORG_MAY_ACT).

/** The state a user or an org acts in. */
export const ACTIVE = 'active';

/** An org's users sign in and its apps start sign-ins only while it is active. */
export function orgMayAct(org: { state: string }): boolean {
  return org.state === ACTIVE;
}

/** A user signs in and its tokens count only while it and its organization are active. */
export function userMayAct<User extends { state: string; org_state: string }>(user: User | undefined): user is User {
  return user !== undefined && user.state === ACTIVE && orgMayAct({ state: user.org_state });
}

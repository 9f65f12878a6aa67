import type { Account, FindAccount, KoaContextWithOIDC } from 'oidc-provider';
import type { Queryable } from '../storage/database.ts';
import type { UserRow } from '../storage/users.ts';
import { loginName } from '../domain/users.ts';
import { METADATA_CLAIM, METADATA_SCOPE, RESOURCE_OWNER_CLAIMS, ROLES_CLAIM, ROLES_SCOPE } from './claims.ts';
import { metadataClaimOf } from '../storage/user-metadata.ts';
import { rolesOfUser } from '../storage/grants.ts';
import { spaceSeparated } from '../domain/space-separated.ts';
import { userMayAct } from '../domain/may-act.ts';
import { HOOK_CLAIMS, type TokenHooks } from './token-hooks.ts';

const GENDER_CLAIM: Record<string, string> = { GENDER_FEMALE: 'female', GENDER_MALE: 'male', GENDER_DIVERSE: 'diverse' };

/** Every claim of a user; the engine keeps those of the granted scopes (OIDC Core 5.4). */
export function userClaims(user: UserRow): Record<string, unknown> {
  const [idClaim, nameClaim, domainClaim] = RESOURCE_OWNER_CLAIMS;
  const claims: Record<string, unknown> = {
    sub: user.id,
    [idClaim]: user.org_id,
    [nameClaim]: user.org_name,
    [domainClaim]: user.primary_domain,
    preferred_username: loginName(user.user_name, user.primary_domain),
    updated_at: Math.floor(new Date(user.change_date).getTime() / 1000),
  };
  if (user.type === 'human') {
    Object.assign(claims, {
      name: user.display_name,
      given_name: user.first_name,
      family_name: user.last_name,
      ...(user.nick_name ? { nickname: user.nick_name } : {}),
      ...(user.preferred_language ? { locale: user.preferred_language } : {}),
      ...(user.gender && GENDER_CLAIM[user.gender] ? { gender: GENDER_CLAIM[user.gender] } : {}),
      email: user.email,
      email_verified: user.email_verified ?? false,
      ...(user.phone ? { phone_number: user.phone, phone_number_verified: user.phone_verified ?? false } : {}),
    });
  } else {
    claims.name = user.name;
  }
  return claims;
}

/** Whether the response that carries this ID token also carries an access token. */
function accessTokenIssuedAlongside(ctx: KoaContextWithOIDC): boolean {
  if (ctx.oidc.route === 'token') return true;
  return spaceSeparated(ctx.oidc.params?.response_type).includes('token');
}

/**
 * OIDC Core 5.4: an ID token issued beside an access token carries no
 * profile, email, phone or address claims (they come from userinfo) unless
 * the app asks for them with idTokenUserinfoAssertion.
 */
function idTokenClaimsOnly(ctx: KoaContextWithOIDC, claims: Record<string, unknown>, requested: object = {}): Record<string, unknown> {
  const client = ctx.oidc.client as unknown as { id_token_userinfo_assertion?: boolean } | undefined;
  if (!accessTokenIssuedAlongside(ctx) || client?.id_token_userinfo_assertion) return claims;
  // Claims the app named for the ID token in the claims parameter (OIDC Core 5.5) stay.
  return Object.fromEntries(
    Object.entries(claims).filter(
      ([name]) => name === 'sub' || name === ROLES_CLAIM || (RESOURCE_OWNER_CLAIMS as readonly string[]).includes(name) || Object.hasOwn(requested, name),
    ),
  );
}

interface RoleClient {
  project_id?: string;
  id_token_role_assertion?: boolean;
  access_token_role_assertion?: boolean;
}

/**
 * The roles claim `{roleKey: {orgId: orgPrimaryDomain}}`
 * (docs/api/users.md), for the app's project: when the roles scope was
 * granted, or the app asserts roles in ID tokens (idTokenRoleAssertion) or
 * at userinfo/introspection (accessTokenRoleAssertion).
 */
async function rolesClaim(
  db: Queryable,
  ctx: KoaContextWithOIDC,
  userId: string,
  use: string,
  scope: string,
): Promise<Record<string, Record<string, string>> | undefined> {
  const client = ctx.oidc.client as unknown as RoleClient | undefined;
  const asked = spaceSeparated(scope).includes(ROLES_SCOPE) || (use === 'id_token' ? client?.id_token_role_assertion : client?.access_token_role_assertion);
  if (!asked) return undefined;
  const roles = await rolesOfUser(db, userId, client?.project_id ? [client.project_id] : undefined);
  if (!roles.length) return undefined;
  const claim: Record<string, Record<string, string>> = {};
  for (const role of roles) claim[role.roleKey] = { ...claim[role.roleKey], [role.orgId]: role.orgPrimaryDomain };
  return claim;
}

/** Reads a user by id (the user cache on hot paths). */
export type UserLookup = (id: string) => Promise<UserRow | undefined>;

/**
 * The preuserinfo hooks run for the claims of an ID token and of userinfo
 * (docs/actions.md), not when introspection borrows the userinfo claims.
 */
function preuserinfoApplies(ctx: KoaContextWithOIDC, use: string): boolean {
  return use === 'id_token' || ctx.oidc?.route === 'userinfo';
}

/** The engine's account lookup: active users only. */
export function accountFinder(db: Queryable, lookup: UserLookup, hooks?: TokenHooks): FindAccount {
  return async (ctx, sub) => {
    const user = await lookup(sub);
    if (!userMayAct(user)) return undefined;
    const account: Account = {
      accountId: user.id,
      async claims(use, scope, requested) {
        const claims = userClaims(user);
        const roles = await rolesClaim(db, ctx, user.id, use, scope ?? '');
        if (roles) claims[ROLES_CLAIM] = roles;
        // Read only when asked for: a token request without the scope costs no query.
        if (spaceSeparated(scope).includes(METADATA_SCOPE)) {
          const metadata = await metadataClaimOf(db, user.id);
          if (Object.keys(metadata).length) claims[METADATA_CLAIM] = metadata;
        }
        const released = use === 'id_token' ? idTokenClaimsOnly(ctx, claims, requested) : claims;
        if (hooks && preuserinfoApplies(ctx, use)) {
          const scopes = spaceSeparated(scope);
          const appended = await hooks.run('preuserinfo', { userId: user.id, clientId: ctx.oidc.client?.clientId ?? '', scopes, userinfo: released });
          if (appended && Object.keys(appended).length) Object.assign(released, { [HOOK_CLAIMS]: appended });
        }
        return released as Awaited<ReturnType<Account['claims']>>;
      },
    };
    return account;
  };
}

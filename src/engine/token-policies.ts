import type Provider from 'oidc-provider';
import type { FindAccount, KoaContextWithOIDC } from 'oidc-provider';
import type { UserRow } from '../storage/users.ts';
import { loginName } from '../domain/users.ts';
import { CLAIMS_BY_SCOPE, METADATA_SCOPE, ROLES_SCOPE } from './claims.ts';
import { userClaims, type UserLookup } from './accounts.ts';
import { MACHINE_KEY_CLAIM } from './key-bound-tokens.ts';
import { HOOK_CLAIMS_EXTRA, hookClaimsOf } from './token-hooks.ts';
import type { EngineRule } from './rule-dispatch.ts';
import { spaceSeparated } from '../domain/space-separated.ts';
import { userMayAct } from '../domain/may-act.ts';

interface ClientLike {
  clientId: string;
  project_id?: string;
  machine_user_id?: string;
}

export interface TokenLike {
  kind: string;
  jti: string;
  clientId: string;
  accountId?: string;
  scope?: string;
  scopes: Set<string>;
  iat?: number;
  /** The thumbprint of the DPoP key the token is bound to (RFC 9449 6). */
  jkt?: string;
  extra?: { aud?: string[] };
  destroy(): Promise<void>;
}

/**
 * A token's audience (docs/oidc.md, Access tokens): the app it was issued
 * to and that app's project, plus the audience a token exchange asked for.
 */
export async function audienceOf(provider: Provider, token: TokenLike): Promise<string[] | undefined> {
  const client = await clientOf(provider, token);
  if (!client) return undefined;
  return [...new Set([client.clientId, ...(client.project_id ? [client.project_id] : []), ...(token.extra?.aud ?? [])])];
}

// The policy and the response details of one introspection both need the
// token's client: looked up once per token.
const tokenClients = new WeakMap<TokenLike, Promise<ClientLike | undefined>>();

function clientOf(provider: Provider, token: TokenLike): Promise<ClientLike | undefined> {
  let client = tokenClients.get(token);
  if (!client) {
    client = provider.Client.find(token.clientId) as unknown as Promise<ClientLike | undefined>;
    tokenClients.set(token, client);
  }
  return client;
}

/**
 * Introspection answers `active: true` only to a client in the token's
 * audience (the app itself, or another app of the same project). A token of
 * a removed app or machine user is inactive.
 */
export async function introspectionAllowed(ctx: KoaContextWithOIDC, client: ClientLike, token: TokenLike): Promise<boolean> {
  const audience = await audienceOf(ctx.oidc.provider as Provider, token);
  if (!audience) return false;
  return audience.includes(client.clientId) || Boolean(client.project_id && audience.includes(client.project_id));
}

/**
 * A client revokes only tokens granted to it (docs/oidc.md); others are
 * silently ignored (RFC 7009 answers 200 either way). An access token is
 * revoked alone, here; a refresh token is left to the engine, which revokes
 * it with its whole grant (its access tokens included).
 */
export async function revocationAllowed(_ctx: KoaContextWithOIDC, client: ClientLike, token: TokenLike): Promise<boolean> {
  if (token.clientId !== client.clientId) return false;
  if (token.kind === 'AccessToken' || token.kind === 'ClientCredentials') {
    await token.destroy();
    return false;
  }
  return true;
}

/** The user claims a set of scopes releases (OIDC Core 5.4). */
function claimsOfScopes(scope: string | undefined): Set<string> {
  return new Set(spaceSeparated(scope).flatMap((s) => CLAIMS_BY_SCOPE[s] ?? []));
}

/**
 * The user claims of the token's granted scopes, as userinfo gives them. The
 * user row already at hand serves them all, except the roles and metadata
 * claims (their own scopes), which take the account's full claim set.
 */
async function releasedClaims(ctx: KoaContextWithOIDC, findAccount: FindAccount, token: TokenLike, user: UserRow): Promise<Record<string, unknown>> {
  const claims =
    token.scopes.has(ROLES_SCOPE) || token.scopes.has(METADATA_SCOPE)
      ? await (await findAccount(ctx, user.id))?.claims('userinfo', token.scope ?? '', {}, [])
      : userClaims(user);
  const released = claimsOfScopes(token.scope);
  return Object.fromEntries(Object.entries(claims ?? {}).filter(([name]) => released.has(name) && name !== 'sub'));
}

/**
 * Introspection of a token whose user is no longer active answers
 * `{"active": false}`; otherwise it adds the fields (RFC 7662 2.2, docs/oidc.md) the engine leaves out:
 * `username` (the login name), `aud` (app and project), `nbf`,
 * `token_type`, and the user claims of the granted scopes, as userinfo
 * would give them.
 */
export function introspectionDetails(lookup: UserLookup, findAccount: FindAccount): EngineRule {
  return async (ctx, next) => {
    await next();
    const body = ctx.body as Record<string, unknown> | undefined;
    if (!body?.active) return;
    const entities = ctx.oidc.entities as unknown as Record<string, TokenLike | undefined>;
    const token = entities.AccessToken ?? entities.ClientCredentials ?? entities.RefreshToken;
    if (!token) return;
    const provider = ctx.oidc.provider as Provider;
    const tokenClient = await clientOf(provider, token);
    const subject = token.accountId ?? tokenClient?.machine_user_id;
    const extra: Record<string, unknown> = {
      jti: token.jti,
      aud: await audienceOf(provider, token),
      // RFC 9449 6.2: a bound token is of type DPoP; the engine's `cnf.jkt` stays.
      token_type: token.jkt ? 'DPoP' : 'Bearer',
      ...(token.iat ? { nbf: token.iat } : {}),
    };
    if (subject) {
      // Tokens end with their user (docs/security.md): a locked, deactivated
      // or removed user's tokens are inactive. The user is read through the
      // per-node cache that the lock, unlock and remove commands clear on
      // every node, so this costs no store round trip of its own.
      const user = await lookup(subject);
      if (!userMayAct(user)) {
        ctx.body = { active: false };
        return;
      }
      extra.sub = subject;
      extra.username = loginName(user.user_name, user.primary_domain);
      if (token.accountId) Object.assign(extra, await releasedClaims(ctx, findAccount, token, user));
    }
    const { [MACHINE_KEY_CLAIM]: _key, [HOOK_CLAIMS_EXTRA]: _hooked, ...visible } = body;
    // Last: the preaccesstoken hooks' claims (docs/actions.md), as the JWT carries them; none of them is reserved.
    ctx.body = { ...visible, ...extra, ...hookClaimsOf(body) };
  };
}

import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { EngineRule } from './rule-dispatch.ts';

// Which tokens end with the browser session they were issued in.

/**
 * Access tokens issued in a browser session end with it (docs/oidc.md). Codes
 * and refresh tokens of `offline_access` outlive it, as OIDC Core intends;
 * their access tokens are revoked at logout by `revokeAccessTokensAtLogout`.
 */
export async function expiresWithSession(_ctx: KoaContextWithOIDC, token: { kind?: string; scopes: Set<string> }): Promise<boolean> {
  return token.kind === 'AccessToken' || !token.scopes.has('offline_access');
}

/**
 * At logout the engine revokes the grants that end with the session; grants
 * with offline_access survive (their refresh tokens are meant to), but the
 * access tokens issued in the session must not (docs/oidc.md): revoke those.
 */
export const revokeAccessTokensAtLogout: EngineRule = async (ctx, next) => {
  await next();
  if (!ctx.oidc) return;
  const session = ctx.oidc.session as unknown as { destroyed?: boolean; authorizations?: Record<string, { grantId?: string }> } | undefined;
  if (!session?.destroyed || !session.authorizations) return;
  const provider = ctx.oidc.provider as Provider;
  const adapter = (provider.AccessToken as unknown as { adapter: { revokeByGrantId(id: string): Promise<void> } }).adapter;
  await Promise.all(
    Object.values(session.authorizations)
      .map((authorization) => authorization.grantId)
      .filter((grantId): grantId is string => Boolean(grantId))
      .map((grantId) => adapter.revokeByGrantId(grantId)),
  );
};

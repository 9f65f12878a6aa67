import type Provider from 'oidc-provider';
import type { Grant, KoaContextWithOIDC } from 'oidc-provider';
import { addGrantableScopes } from './api-scope.ts';

/**
 * First-party apps need no consent screen (docs/oidc.md): the grant of the
 * browser session for this app is created, or extended, with the requested
 * scopes the app may have and the requested claims, so the engine's consent
 * prompt has nothing to ask.
 */
export async function loadFirstPartyGrant(ctx: KoaContextWithOIDC) {
  const { oidc } = ctx;
  const accountId = oidc.session?.accountId;
  const client = oidc.client;
  if (!accountId || !client) return undefined;
  const provider = oidc.provider as Provider;
  const grantId = oidc.result?.consent?.grantId ?? oidc.session?.grantIdFor(client.clientId);
  const existing = grantId ? await provider.Grant.find(grantId) : undefined;
  const reused = existing && existing.accountId === accountId && existing.clientId === client.clientId ? existing : undefined;
  const grant = reused ?? new provider.Grant({ accountId, clientId: client.clientId });
  await saveGrantChange(grant, Boolean(reused), () => {
    addGrantableScopes(grant, client, oidc.requestParamOIDCScopes ?? []);
    const claims = [...(oidc.requestParamClaims ?? [])];
    if (claims.length) grant.addOIDCClaims(claims);
  });
  return grant;
}

/**
 * Applies `change` to a first-party grant and saves it, unless it is a
 * stored grant that `change` left as it was: saving that again would write
 * the same payload with the same expiry (a sign-in with a consent step
 * passes here three times). Answers the grant's id.
 */
export async function saveGrantChange(grant: Grant, stored: boolean, change: () => void): Promise<string> {
  const before = stored ? grantedOf(grant) : undefined;
  change();
  if (stored && grantedOf(grant) === before) return grant.jti;
  return grant.save();
}

/** What a grant holds that the sign-in adds to. */
function grantedOf(grant: Grant): string {
  return JSON.stringify([grant.openid, grant.resources, grant.rejected]);
}

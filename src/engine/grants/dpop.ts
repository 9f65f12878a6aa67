import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import validateDpop from 'oidc-provider/lib/helpers/validate_dpop.js';
import { applyDpopBinding } from 'oidc-provider/lib/helpers/grant_common.js';
import { checkDpopRequired } from 'oidc-provider/lib/helpers/sender_constraints.js';
import { setRefreshTokenBindings } from 'oidc-provider/lib/helpers/set_rt_bindings.js';

/**
 * DPoP (RFC 9449 5) for our own grants, as the engine does it for its own:
 * a proof sent to the token endpoint is verified, checked against replay
 * and binds the new access token to its key (`cnf.jkt`, token type DPoP);
 * an app with `dpop_bound_access_tokens` must send one. Answers the token
 * type for the response.
 */
export async function bindToDpopProof(ctx: KoaContextWithOIDC, token: object): Promise<'DPoP' | 'Bearer'> {
  const provider = ctx.oidc.provider as Provider;
  const proof = await validateDpop(provider, ctx);
  await applyDpopBinding(provider, ctx, proof, token);
  checkDpopRequired(provider, ctx, proof);
  return proof ? 'DPoP' : 'Bearer';
}

/** A refresh token issued beside a bound access token is bound too, for public clients (RFC 9449 5). */
export function bindRefreshToken(ctx: KoaContextWithOIDC, accessToken: object, refreshToken: object): Promise<void> {
  return setRefreshTokenBindings(ctx, accessToken, refreshToken);
}

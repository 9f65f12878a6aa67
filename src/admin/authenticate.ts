import type { Middleware } from 'koa';
import type { Queryable } from '../storage/database.ts';
import { Unauthenticated } from '../domain/errors.ts';
import type { TokenOwner, TokenVerifier } from '../domain/tokens.ts';
import { loadPrincipal } from '../queries/principal.ts';
import { DPOP_SIGNING_ALGS } from '../engine/configuration.ts';
import { DpopRefused, type DpopProofCheck } from '../engine/dpop-resource-proofs.ts';

// RFC 6750 2.1 and RFC 9449 7.1: a case-insensitive scheme (RFC 7235), one
// or more spaces, a b64token — with a generous length cap.
const AUTHORIZATION = /^(Bearer|DPoP) +([A-Za-z0-9._~+/-]{1,4096}=*)$/i;

/** RFC 9449 7.1: the challenge of a refusal that concerns DPoP names the scheme and the algorithms we take. */
function dpopChallenge(error: string): string {
  return `DPoP realm="portcullis", error="${error}", algs="${DPOP_SIGNING_ALGS.join(' ')}"`;
}

/**
 * A DPoP-bound token counts only as `Authorization: DPoP` with a valid
 * proof of its key (RFC 9449 7.1), as at userinfo: sent as a Bearer token
 * it proves nothing of its holder. The DPoP scheme is for bound tokens only.
 */
async function checkSenderConstraint(ctx: Parameters<Middleware>[0], scheme: string, token: string, owner: TokenOwner, prove: DpopProofCheck): Promise<void> {
  const dpop = scheme === 'dpop';
  if (!owner.binding) {
    if (dpop) throw new Unauthenticated('the token is not bound to a DPoP key; send it as Authorization: Bearer', dpopChallenge('invalid_token'));
    return;
  }
  if (!dpop) throw new Unauthenticated('the token is bound to a DPoP key; send it as Authorization: DPoP with a DPoP proof', dpopChallenge('invalid_token'));
  let thumbprint: string;
  try {
    thumbprint = await prove(ctx, token, owner.binding.clientId);
  } catch (err) {
    if (err instanceof DpopRefused) throw new Unauthenticated(`DPoP proof refused: ${err.message}`, dpopChallenge(err.error));
    throw err;
  }
  if (thumbprint !== owner.binding.jkt)
    throw new Unauthenticated('the DPoP proof is signed by another key than the token is bound to', dpopChallenge('invalid_dpop_proof'));
}

/**
 * `Authorization: Bearer <token>` (or `DPoP <token>` with its proof), tried
 * against each verifier in turn: PATs, then the engine's access tokens.
 */
export function authenticate(db: Queryable, verifiers: TokenVerifier[], prove: DpopProofCheck): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('authorization');
    if (!header) throw new Unauthenticated('missing Authorization: Bearer token');
    const match = AUTHORIZATION.exec(header);
    if (!match) throw new Unauthenticated('malformed Authorization header; expected Bearer token');
    const scheme = match[1]!.toLowerCase();
    const token = match[2]!;
    let owner: TokenOwner | undefined;
    for (const verify of verifiers) {
      owner = await verify(token);
      if (owner) break;
    }
    if (!owner) throw new Unauthenticated('token is invalid or expired');
    await checkSenderConstraint(ctx, scheme, token, owner, prove);
    ctx.state.principal = await loadPrincipal(db, owner);
    await next();
  };
}

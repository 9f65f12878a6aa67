import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import validateDpop, { checkDpopReplay } from 'oidc-provider/lib/helpers/validate_dpop.js';
import type { EngineHolder } from './engine-holder.ts';

/** Why a DPoP-bound token's request was refused, with the error code of RFC 9449 7.1 for the challenge. */
export class DpopRefused extends Error {
  override name = 'DpopRefused';
  readonly error: string;
  constructor(message: string, error: 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce') {
    super(message);
    this.error = error;
  }
}

/** The thumbprint of the key a request's DPoP proof proves, for the access token it carries and the token's client. */
export type DpopProofCheck = (ctx: Context, accessToken: string, clientId: string) => Promise<string>;

/**
 * RFC 9449 7 at our own resource servers (the admin and management APIs):
 * the request's DPoP proof is checked by the engine's own validation, the
 * one userinfo runs — signature with the embedded key (never `alg: none`),
 * `typ`, `htm` and `htu` of this request, `iat` within the engine's window
 * (or its nonce), `ath` of the token — and its `jti` is claimed once in the
 * replay store every node shares, under the token's client as userinfo does.
 * The engine's steps read only these members of their context.
 */
export function dpopProofCheck(engine: EngineHolder): DpopProofCheck {
  return async (ctx, accessToken, clientId) => {
    const provider = engine.provider;
    // RFC 9449 4.3: `htu` is this request's URL without query and fragment.
    const htu = URL.parse(`${ctx.protocol}://${ctx.host}${ctx.path}`)?.href;
    if (!htu) throw new DpopRefused('the request names no host to check the proof against', 'invalid_dpop_proof');
    const request = engineRequest(provider, ctx, htu);
    try {
      const proof = await validateDpop(provider, request, accessToken);
      if (!proof) throw new DpopRefused('a DPoP-bound token needs a DPoP proof', 'invalid_dpop_proof');
      await checkDpopReplay(provider, request, proof, clientId, errors.InvalidDpopProof);
      return proof.thumbprint;
    } catch (err) {
      if (err instanceof errors.OIDCProviderError) {
        const code = err.error === 'use_dpop_nonce' ? 'use_dpop_nonce' : 'invalid_dpop_proof';
        throw new DpopRefused(err.error_description ?? 'invalid DPoP proof', code);
      }
      throw err;
    }
  };
}

/** The request as the engine's DPoP steps see one. */
function engineRequest(provider: Provider, ctx: Context, htu: string): KoaContextWithOIDC {
  return {
    method: ctx.method,
    get: (name: string) => ctx.get(name),
    set: (name: string, value: string) => ctx.set(name, value),
    assert(value: unknown, err: Error) {
      if (!value) throw err;
    },
    oidc: { provider, route: 'admin_api', urlFor: () => htu },
  } as unknown as KoaContextWithOIDC;
}

// Engine internals it does not export, taken from its lib/ (there is no
// exports map): its own DPoP steps of a grant, which our grants call exactly
// as its client_credentials grant does (lib/actions/grants/client_credentials.js),
// and its request context store (engine-overrides.ts).

declare module 'oidc-provider/lib/helpers/validate_dpop.js' {
  import type Provider from 'oidc-provider';
  import type { KoaContextWithOIDC } from 'oidc-provider';

  export interface DpopProof {
    thumbprint: string;
    jti: string;
    iat: number;
  }
  /** The verified proof of the request, once validateDpop has run. */
  export function getDpopJwt(provider: Provider, ctx: KoaContextWithOIDC): { payload: { jti: string } } | undefined;
  /** The request's verified DPoP proof (htm, htu, iat or nonce, signature), or undefined when none was sent. */
  export default function validateDpop(provider: Provider, ctx: KoaContextWithOIDC, accessToken?: string): Promise<DpopProof | undefined>;
  /** Claims the proof's `jti` once (ReplayDetection, under `clientId`); a replay is `ErrorClass`. */
  export function checkDpopReplay(
    provider: Provider,
    ctx: KoaContextWithOIDC,
    dPoP: DpopProof | undefined,
    clientId: string,
    ErrorClass?: new (description: string) => Error,
  ): Promise<void>;
}

declare module 'oidc-provider/lib/helpers/grant_common.js' {
  import type Provider from 'oidc-provider';
  import type { KoaContextWithOIDC } from 'oidc-provider';
  import type { DpopProof } from 'oidc-provider/lib/helpers/validate_dpop.js';

  /** Refuses a replayed proof (ReplayDetection) and binds the token to the proof's key (`jkt`). */
  export function applyDpopBinding(provider: Provider, ctx: KoaContextWithOIDC, dPoP: DpopProof | undefined, token: object): Promise<void>;
}

declare module 'oidc-provider/lib/helpers/sender_constraints.js' {
  import type Provider from 'oidc-provider';
  import type { KoaContextWithOIDC } from 'oidc-provider';
  import type { DpopProof } from 'oidc-provider/lib/helpers/validate_dpop.js';

  /** invalid_grant when the client must use DPoP (dpop_bound_access_tokens) and sent no proof. */
  export function checkDpopRequired(provider: Provider, ctx: KoaContextWithOIDC, dPoP: DpopProof | undefined): void;
}

declare module 'oidc-provider/lib/helpers/set_rt_bindings.js' {
  import type { KoaContextWithOIDC } from 'oidc-provider';

  /** A public client's refresh token takes its access token's `jkt`. */
  export function setRefreshTokenBindings(ctx: KoaContextWithOIDC, accessToken: object, refreshToken: object): Promise<void>;
}

declare module 'oidc-provider/lib/helpers/als.js' {
  import type { AsyncLocalStorage } from 'node:async_hooks';
  import type { KoaContextWithOIDC } from 'oidc-provider';

  /** The engine's request context store: its endpoints run inside it (lib/helpers/initialize_app.js). */
  const als: AsyncLocalStorage<KoaContextWithOIDC>;
  export default als;
}

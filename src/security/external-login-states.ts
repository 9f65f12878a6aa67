import type { Adapter } from 'oidc-provider';

/**
 * What a login keeps server side while the browser is at an external
 * provider (docs/idps.md): the interaction it belongs to, the provider, and
 * the nonce and PKCE verifier the answer is checked with, under the `state`
 * sent along. The record is taken once: a replayed callback finds nothing.
 */
export interface ExternalLoginState {
  /** The interaction (`/ui/login/{uid}`) the trip started from. */
  uid: string;
  idpId: string;
  nonce: string;
  codeVerifier: string;
}

export interface ExternalLoginStates {
  put(state: string, record: ExternalLoginState): Promise<void>;
  /** The record of `state` without taking it: where the callback sends the browser. */
  peek(state: string): Promise<ExternalLoginState | undefined>;
  /** The record, claimed atomically: a second take of the same state (a replay, on any node) finds nothing. */
  take(state: string): Promise<ExternalLoginState | undefined>;
}

/** Long enough to sign in at the upstream, short enough that a stale trip fails. */
export const EXTERNAL_LOGIN_TTL_SECONDS = 600;

/** openid-client's randomState(): 32 random bytes, base64url. */
const STATE = /^[A-Za-z0-9_-]{43}$/;

type ClaimingAdapter = Adapter & { claim?(id: string, payload: object, expiresIn: number): Promise<boolean> };

export function externalLoginStates(adapter: ClaimingAdapter): ExternalLoginStates {
  async function peek(state: string): Promise<ExternalLoginState | undefined> {
    if (!STATE.test(state)) return undefined;
    const record = (await adapter.find(state)) as (ExternalLoginState & { consumed?: unknown }) | undefined;
    if (!record || record.consumed) return undefined;
    return { uid: record.uid, idpId: record.idpId, nonce: record.nonce, codeVerifier: record.codeVerifier };
  }
  return {
    async put(state, record) {
      await adapter.upsert(state, { ...record }, EXTERNAL_LOGIN_TTL_SECONDS);
    },
    peek,
    async take(state) {
      const record = await peek(state);
      if (!record) return undefined;
      if (adapter.claim && !(await adapter.claim(`taken.${state}`, { taken: true }, EXTERNAL_LOGIN_TTL_SECONDS))) return undefined;
      await adapter.consume(state);
      return record;
    },
  };
}

import { singleUseRecords, type ClaimingAdapter } from './single-use-records.ts';

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

export function externalLoginStates(adapter: ClaimingAdapter): ExternalLoginStates {
  const records = singleUseRecords<ExternalLoginState>(adapter, EXTERNAL_LOGIN_TTL_SECONDS, STATE);
  return { put: (state, record) => records.putAs(state, record), peek: (state) => records.find(state), take: (state) => records.take(state) };
}

import { createHash } from 'node:crypto';
import { singleUseRecords, type ClaimingAdapter } from '../security/single-use-records.ts';

// What the SAML IdP keeps between requests, in the engine-record storage
// (Redis, or PostgreSQL without Redis; adapters/): the AuthnRequest waiting
// for its sign-in, taken once when the engine sends the browser back, and
// the ids of requests already seen, so that a replayed request is refused
// (SAML 2.0 Profiles 4.1.4.5 asks the same of responses at the SP).

export interface PendingSamlRequest {
  appId: string;
  /** The AuthnRequest's ID; none for an IdP-initiated sign-in (its response is unsolicited). */
  requestId?: string;
  acsUrl: string;
  relayState?: string;
  nameIdFormat: string;
  /** The PKCE verifier of the engine authorization that signs the user in; never leaves the server. */
  verifier: string;
  isPassive: boolean;
}

/** How long a person may take to sign in before the request is forgotten (the engine's interaction lives as long). */
export const PENDING_TTL_SECONDS = 3600;

export interface SamlRequestStore {
  put(request: PendingSamlRequest): Promise<string>;
  /** The pending request, once: two continuations of one sign-in cannot both take it. */
  take(id: string): Promise<PendingSamlRequest | undefined>;
  /** True the first time `requestId` of the app is seen within `seconds`; false for a replay. */
  firstSeen(appId: string, requestId: string, seconds: number): Promise<boolean>;
}

export function samlRequestStore(pending: ClaimingAdapter, seen: ClaimingAdapter): SamlRequestStore {
  const waiting = singleUseRecords<PendingSamlRequest>(pending, PENDING_TTL_SECONDS);
  return {
    put: (request) => waiting.put(request),
    take: (id) => waiting.take(id),
    async firstSeen(appId, requestId, seconds) {
      const key = createHash('sha256').update(`${appId}\n${requestId}`).digest('base64url');
      if (!seen.claim) throw new Error('the store of seen SAML request ids must claim atomically');
      return seen.claim(key, { seen: true }, seconds);
    },
  };
}

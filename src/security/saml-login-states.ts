import { createHash, randomBytes } from 'node:crypto';
import type { Adapter } from 'oidc-provider';
import type { ExternalIdentity } from '../outbound/upstream.ts';

/**
 * What a login keeps server side around a trip to a SAML IdP (docs/idps.md,
 * SAML), in the engine-record storage:
 * - the AuthnRequest sent, under the RelayState that travels with it: the
 *   interaction it belongs to and the request ID the response must answer;
 *   taken once, so a response answers one request;
 * - the identity the ACS checked, under a one-time token the browser
 *   carries back into its interaction (the ACS is a cross-site POST, which
 *   brings no cookie of the interaction);
 * - the IDs of responses and assertions accepted, until they expire, so a
 *   replayed one is refused (SAML 2.0 Profiles 4.1.4.5).
 */

export interface PendingSamlLogin {
  uid: string;
  idpId: string;
  requestId: string;
}

export interface VerifiedSamlLogin {
  uid: string;
  idpId: string;
  identity: ExternalIdentity;
}

export interface SamlLoginStates {
  /** Remembers the request; answers the RelayState to send with it. */
  putPending(record: PendingSamlLogin): Promise<string>;
  takePending(relayState: string): Promise<PendingSamlLogin | undefined>;
  /** Keeps the checked identity; answers the token the browser brings back. */
  putVerified(record: VerifiedSamlLogin): Promise<string>;
  takeVerified(token: string): Promise<VerifiedSamlLogin | undefined>;
  /** True the first time the provider's message `id` is seen; false for a replay. Remembered until `until`. */
  firstSeen(idpId: string, id: string, until: Date): Promise<boolean>;
}

/** Long enough to sign in at the IdP, short enough that a stale trip fails. */
export const SAML_LOGIN_TTL_SECONDS = 600;
/** The token from the ACS to the interaction is used at once, by the redirect. */
const VERIFIED_TTL_SECONDS = 120;

const KEY = /^[A-Za-z0-9_-]{43}$/;

type ClaimingAdapter = Adapter & { claim?(id: string, payload: object, expiresIn: number): Promise<boolean> };

export function samlLoginStates(adapter: ClaimingAdapter): SamlLoginStates {
  if (!adapter.claim) throw new Error('the SAML login store must claim atomically');
  const claim = adapter.claim.bind(adapter);

  async function put(prefix: string, record: object, ttl: number): Promise<string> {
    const key = randomBytes(32).toString('base64url');
    await adapter.upsert(`${prefix}.${key}`, { ...record }, ttl);
    return key;
  }

  async function take<T>(prefix: string, key: string, ttl: number): Promise<T | undefined> {
    if (!KEY.test(key)) return undefined;
    const record = (await adapter.find(`${prefix}.${key}`)) as (T & { consumed?: unknown }) | undefined;
    if (!record || record.consumed) return undefined;
    if (!(await claim(`taken.${prefix}.${key}`, { taken: true }, ttl))) return undefined;
    await adapter.consume(`${prefix}.${key}`);
    const { consumed: _consumed, ...rest } = record;
    return rest as T;
  }

  return {
    putPending: (record) => put('pending', record, SAML_LOGIN_TTL_SECONDS),
    takePending: async (relayState) => {
      const record = await take<PendingSamlLogin>('pending', relayState, SAML_LOGIN_TTL_SECONDS);
      return record && { uid: record.uid, idpId: record.idpId, requestId: record.requestId };
    },
    putVerified: (record) => put('verified', record, VERIFIED_TTL_SECONDS),
    takeVerified: async (token) => {
      const record = await take<VerifiedSamlLogin>('verified', token, VERIFIED_TTL_SECONDS);
      return record && { uid: record.uid, idpId: record.idpId, identity: record.identity };
    },
    async firstSeen(idpId, id, until) {
      const key = createHash('sha256').update(`${idpId}\n${id}`).digest('base64url');
      const seconds = Math.max(60, Math.ceil((until.getTime() - Date.now()) / 1000) + 60);
      return claim(`seen.${key}`, { seen: true }, seconds);
    },
  };
}

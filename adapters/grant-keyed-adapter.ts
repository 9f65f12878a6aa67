import { randomBytes } from 'node:crypto';
import type { Adapter, AdapterPayload } from 'oidc-provider';

/**
 * Grants made for one access token and nothing else (the JWT profile, a
 * token exchange without refresh token) expire with that token. Their ids
 * start with this prefix: '.' is outside the alphabet of the engine's own
 * ids, so no grant the engine makes carries it, and the store can tell
 * where such a grant lives from its id alone.
 */
const SINGLE_TOKEN_GRANT_PREFIX = 'at.';

/** Models whose records are keyed by a grant id: they follow the grant. */
export const GRANT_KEYED_MODELS: ReadonlySet<string> = new Set(['Grant', 'TokenExchangeOutcome']);

export function singleTokenGrantId(): string {
  return `${SINGLE_TOKEN_GRANT_PREFIX}${randomBytes(32).toString('base64url')}`;
}

function isSingleTokenGrantId(id: string): boolean {
  return id.startsWith(SINGLE_TOKEN_GRANT_PREFIX);
}

/**
 * A grant-keyed model split over two stores: a single-token grant lives as
 * briefly as its access token and goes where the token went (Redis); every
 * other grant (a user's consent, the grant of a refresh token) stays durable.
 */
export class GrantKeyedAdapter implements Adapter {
  readonly #durable: Adapter;
  readonly #shortLived: Adapter;

  constructor(durable: Adapter, shortLived: Adapter) {
    this.#durable = durable;
    this.#shortLived = shortLived;
  }

  upsert(id: string, payload: AdapterPayload, expiresIn?: number): ReturnType<Adapter['upsert']> {
    return this.#storeOf(id).upsert(id, payload, expiresIn);
  }

  find(id: string): ReturnType<Adapter['find']> {
    return this.#storeOf(id).find(id);
  }

  findByUid(uid: string): ReturnType<Adapter['findByUid']> {
    return this.#durable.findByUid(uid);
  }

  findByUserCode(userCode: string): ReturnType<Adapter['findByUserCode']> {
    return this.#durable.findByUserCode(userCode);
  }

  consume(id: string): ReturnType<Adapter['consume']> {
    return this.#storeOf(id).consume(id);
  }

  destroy(id: string): ReturnType<Adapter['destroy']> {
    return this.#storeOf(id).destroy(id);
  }

  revokeByGrantId(grantId: string): ReturnType<Adapter['revokeByGrantId']> {
    return this.#storeOf(grantId).revokeByGrantId(grantId);
  }

  #storeOf(id: string): Adapter {
    return isSingleTokenGrantId(id) ? this.#shortLived : this.#durable;
  }
}

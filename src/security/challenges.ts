import { randomBytes } from 'node:crypto';
import type { Adapter } from 'oidc-provider';

/**
 * WebAuthn challenges as single-use records with a TTL in the engine-record
 * storage (Redis, or PostgreSQL without Redis; adapters/). A challenge is
 * taken once: taking claims it atomically (two submissions of one assertion
 * at the same moment, on one node or two, cannot both take it) and marks it
 * consumed; a consumed or expired one is gone.
 */
export interface ChallengeStore {
  put(data: ChallengeData): Promise<string>;
  take(id: string): Promise<ChallengeData | undefined>;
}

export interface ChallengeData {
  challenge: string;
  /** What the challenge is for: registering a passkey, or signing in with one. */
  purpose: 'register' | 'authenticate';
  /** The user it was made for (registration, second factor); none for a passwordless sign-in. */
  userId?: string;
}

/** Long enough for a person to touch the authenticator, short enough that a stale page fails. */
export const CHALLENGE_TTL_SECONDS = 300;

/** Our adapters' atomic "write unless present" (adapters/redis.ts, adapters/postgres.ts), as replay detection uses it. */
type ClaimingAdapter = Adapter & { claim?(id: string, payload: object, expiresIn: number): Promise<boolean> };

export function challengeStore(adapter: ClaimingAdapter): ChallengeStore {
  return {
    async put(data) {
      const id = randomBytes(16).toString('base64url');
      await adapter.upsert(id, { ...data }, CHALLENGE_TTL_SECONDS);
      return id;
    },
    async take(id) {
      if (!/^[A-Za-z0-9_-]{22}$/.test(id)) return undefined;
      const record = (await adapter.find(id)) as (ChallengeData & { consumed?: unknown }) | undefined;
      if (!record || record.consumed) return undefined;
      if (adapter.claim && !(await adapter.claim(`taken.${id}`, { taken: true }, CHALLENGE_TTL_SECONDS))) return undefined;
      await adapter.consume(id);
      return { challenge: record.challenge, purpose: record.purpose, ...(record.userId ? { userId: record.userId } : {}) };
    },
  };
}

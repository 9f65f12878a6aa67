import type { Adapter } from 'oidc-provider';

/**
 * The `act` claim of tokens from an impersonating token exchange, by grant:
 * tokens refreshed from that grant keep naming the actor (the engine's
 * refresh tokens have no place for it). Kept in the engine's durable store.
 */
export interface ActorStore {
  remember(grantId: string, act: { sub: string }): Promise<void>;
  actorOf(grantId: string): Promise<{ sub: string } | undefined>;
}

export function actorStore(adapter: Adapter, lifetime: number): ActorStore {
  return {
    async remember(grantId, act) {
      await adapter.upsert(grantId, { act } as never, lifetime);
    },
    async actorOf(grantId) {
      const found = (await adapter.find(grantId)) as { act?: { sub: string } } | undefined;
      return found?.act;
    },
  };
}

/** extraTokenClaims: tokens of exchanged grants carry `act`. */
export function actClaims(actors: ActorStore) {
  return async (_ctx: unknown, token: { gty?: string; grantId?: string }): Promise<Record<string, unknown> | undefined> => {
    if (!token.grantId || !token.gty?.includes('token-exchange')) return undefined;
    const act = await actors.actorOf(token.grantId);
    return act ? { act } : undefined;
  };
}

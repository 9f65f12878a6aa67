import type { EngineHolder } from '../engine/engine-holder.ts';
import { API_SCOPE } from '../engine/claims.ts';
import { mayHoldApiScope } from '../engine/api-scope.ts';
import type { UserLookup } from '../engine/accounts.ts';
import type { ExchangeOutcomes } from '../engine/grants/exchange-outcomes.ts';
import type { TokenOwner } from '../domain/tokens.ts';
import { userMayAct } from '../domain/may-act.ts';

interface EngineToken {
  accountId?: string;
  clientId: string;
  grantId?: string;
  gty?: string;
  jkt?: string;
  scopes: Set<string>;
}

/**
 * Besides PATs, the admin API takes access tokens of this service that carry
 * the `urn:service:iam:api` scope and were issued to a client that may hold
 * it (docs/security.md) — from the JWT profile grant, client credentials
 * (the machine user behind the client), a browser login through an opted-in
 * app, or a token exchange. Revoked, expired and logged-out tokens are not
 * found, nor tokens of a user who is no longer active: the user is read
 * through the per-node user cache, which every node clears when a user is
 * locked, unlocked or removed. A token that acts for another user names its
 * actor (`act`); a token bound to a DPoP key names the key (`jkt`).
 */
export function engineTokenVerifier(engine: EngineHolder, lookupUser: UserLookup, exchanges: ExchangeOutcomes) {
  return async (value: string): Promise<TokenOwner | undefined> => {
    const provider = engine.provider;
    const token = ((await provider.AccessToken.find(value)) ?? (await provider.ClientCredentials.find(value))) as unknown as EngineToken | undefined;
    if (!token?.scopes.has(API_SCOPE)) return undefined;
    const client = (await provider.Client.find(token.clientId)) as unknown as { machine_user_id?: string } | undefined;
    if (!mayHoldApiScope(client)) return undefined;
    const userId = token.accountId ?? client?.machine_user_id;
    const user = userId ? await lookupUser(userId) : undefined;
    if (!userMayAct(user)) return undefined;
    const exchanged = token.grantId && token.gty?.includes('token-exchange') ? await exchanges.outcomeOf(token.grantId) : undefined;
    return {
      userId: user.id,
      orgId: user.org_id,
      ...(exchanged?.act ? { impersonatorId: exchanged.act.sub } : {}),
      ...(token.jkt ? { binding: { jkt: token.jkt, clientId: token.clientId } } : {}),
    };
  };
}

import type { Queryable } from '../storage/database.ts';
import { findUser } from '../storage/users.ts';
import type { EngineHolder } from '../engine/engine-holder.ts';
import { API_SCOPE } from '../engine/claims.ts';
import { mayHoldApiScope } from '../engine/api-scope.ts';
import type { ExchangeOutcomes } from '../engine/grants/token-extras.ts';
import type { TokenOwner } from '../admin/authenticate.ts';

interface EngineToken {
  accountId?: string;
  clientId: string;
  grantId?: string;
  gty?: string;
  scopes: Set<string>;
}

/**
 * Besides PATs, the admin API takes access tokens of this service that carry
 * the `urn:service:iam:api` scope and were issued to a client that may hold
 * it (docs/security.md) — from the JWT profile grant, client credentials
 * (the machine user behind the client), a browser login through an opted-in
 * app, or a token exchange. Revoked, expired and logged-out tokens are not
 * found. A token that acts for another user names its actor (`act`).
 */
export function engineTokenVerifier(engine: EngineHolder, db: Queryable, exchanges: ExchangeOutcomes) {
  return async (value: string): Promise<TokenOwner | undefined> => {
    const provider = engine.provider;
    const token = ((await provider.AccessToken.find(value)) ?? (await provider.ClientCredentials.find(value))) as unknown as EngineToken | undefined;
    if (!token?.scopes.has(API_SCOPE)) return undefined;
    const client = (await provider.Client.find(token.clientId)) as unknown as { machine_user_id?: string } | undefined;
    if (!mayHoldApiScope(client)) return undefined;
    const userId = token.accountId ?? client?.machine_user_id;
    const user = userId ? await findUser(db, userId) : undefined;
    if (user?.state !== 'active') return undefined;
    const exchanged = token.grantId && token.gty?.includes('token-exchange') ? await exchanges.outcomeOf(token.grantId) : undefined;
    return { userId: user.id, orgId: user.org_id, ...(exchanged?.act ? { impersonatorId: exchanged.act.sub } : {}) };
  };
}

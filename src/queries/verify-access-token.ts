import type { Queryable } from '../storage/database.ts';
import { findUser } from '../storage/users.ts';
import type { EngineHolder } from '../engine/engine-holder.ts';
import { API_SCOPE } from '../engine/claims.ts';

interface EngineToken {
  accountId?: string;
  clientId: string;
  scopes: Set<string>;
}

/**
 * SPEC 3: besides PATs, the admin API takes access tokens of this service
 * that carry the `urn:service:iam:api` scope — from the JWT profile grant
 * (a user's token) or client credentials (the machine user behind the
 * client). Revoked, expired and logged-out tokens are not found.
 */
export function engineTokenVerifier(engine: EngineHolder, db: Queryable) {
  return async (value: string): Promise<{ userId: string; orgId: string } | undefined> => {
    const provider = engine.provider;
    const token = ((await provider.AccessToken.find(value)) ?? (await provider.ClientCredentials.find(value))) as unknown as EngineToken | undefined;
    if (!token?.scopes.has(API_SCOPE)) return undefined;
    const client = token.accountId ? undefined : ((await provider.Client.find(token.clientId)) as unknown as { machine_user_id?: string } | undefined);
    const userId = token.accountId ?? client?.machine_user_id;
    const user = userId ? await findUser(db, userId) : undefined;
    return user && user.state === 'active' ? { userId: user.id, orgId: user.org_id } : undefined;
  };
}

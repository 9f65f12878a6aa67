import type Provider from 'oidc-provider';
import type { Queryable } from '../storage/database.ts';
import { findActiveMachineKey } from '../storage/credentials.ts';

/** The name, in a token's `extra`, of the machine key that obtained it. */
export const MACHINE_KEY_CLAIM = 'machine_key';

interface KeyBoundToken {
  accountId?: string;
  extra?: Record<string, unknown>;
}

/**
 * A token obtained with a machine user's key (JWT profile) lives only as
 * long as that key: once the key is deleted or expired, every lookup of the
 * token — userinfo, introspection, revocation, the admin API — finds nothing.
 */
export function bindTokensToMachineKeys(provider: Provider, db: Queryable): void {
  const AccessToken = provider.AccessToken as unknown as { find(value: string, options?: unknown): Promise<KeyBoundToken | undefined> };
  const find = AccessToken.find.bind(AccessToken);
  AccessToken.find = async (value, options) => {
    const token = await find(value, options);
    const keyId = token?.extra?.[MACHINE_KEY_CLAIM];
    if (typeof keyId === 'string' && !(token!.accountId && (await findActiveMachineKey(db, token!.accountId, keyId)))) return undefined;
    return token;
  };
}

import type { MachineKeyLookup } from '../storage/machine-key-cache.ts';

/** The name, in a token's `extra`, of the machine key that obtained it. */
export const MACHINE_KEY_CLAIM = 'machine_key';

export interface KeyBoundToken {
  accountId?: string;
  extra?: Record<string, unknown>;
}

/**
 * A token obtained with a machine user's key (JWT profile) lives only as
 * long as that key: once the key is deleted or expired, the token is as good
 * as gone. Tokens not bound to a key are unaffected.
 */
export async function boundKeyStillActive(machineKeys: MachineKeyLookup, token: KeyBoundToken): Promise<boolean> {
  const keyId = token.extra?.[MACHINE_KEY_CLAIM];
  if (typeof keyId !== 'string') return true;
  return Boolean(token.accountId && (await machineKeys(token.accountId, keyId)));
}

import type { Adapter } from 'oidc-provider';
import { MACHINE_KEY_CLAIM } from '../key-bound-tokens.ts';
import { accessTokenHookClaims, type TokenHooks } from '../token-hooks.ts';

/** What a token exchange decided beyond the engine's token fields. */
export interface ExchangeOutcome {
  /** RFC 8693 4.1: the acting party, when it differs from the subject. */
  act?: { sub: string };
  /** RFC 8693 2.1: where the new token is meant to be used. */
  aud?: string[];
}

/**
 * Kept per grant, as long as the grant, so tokens refreshed from an
 * exchanged grant keep their actor and audience (the engine's refresh tokens
 * have no place for them). Stored where the grant is (grant-keyed-adapter.ts).
 */
export interface ExchangeOutcomes {
  remember(grantId: string, outcome: ExchangeOutcome, lifetime: number): Promise<void>;
  outcomeOf(grantId: string): Promise<ExchangeOutcome | undefined>;
}

export function exchangeOutcomes(adapter: Adapter): ExchangeOutcomes {
  return {
    async remember(grantId, outcome, lifetime) {
      await adapter.upsert(grantId, outcome as never, lifetime);
    },
    async outcomeOf(grantId) {
      const found = (await adapter.find(grantId)) as ExchangeOutcome | undefined;
      return found && { ...(found.act ? { act: found.act } : {}), ...(found.aud ? { aud: found.aud } : {}) };
    },
  };
}

/**
 * extraTokenClaims: tokens of exchanged grants carry `act` and the requested
 * audience; tokens of the JWT profile name the machine key that obtained
 * them; access tokens carry what the preaccesstoken hooks add.
 */
export function tokenExtraClaims(exchanges: ExchangeOutcomes, hooks?: TokenHooks) {
  return async (_ctx: unknown, token: ExtraClaimsToken): Promise<Record<string, unknown> | undefined> => {
    const extra = { ...(await grantExtraClaims(exchanges, token)), ...(await accessTokenHookClaims(hooks, token)) };
    return Object.keys(extra).length ? extra : undefined;
  };
}

interface ExtraClaimsToken {
  gty?: string;
  grantId?: string;
  accountId?: string;
  clientId?: string;
  scope?: string;
  client?: { machine_user_id?: string };
  [MACHINE_KEY_CLAIM]?: string;
}

async function grantExtraClaims(exchanges: ExchangeOutcomes, token: ExtraClaimsToken): Promise<Record<string, unknown> | undefined> {
  if (token[MACHINE_KEY_CLAIM]) return { [MACHINE_KEY_CLAIM]: token[MACHINE_KEY_CLAIM] };
  if (!token.grantId || !token.gty?.includes('token-exchange')) return undefined;
  const outcome = await exchanges.outcomeOf(token.grantId);
  return outcome && Object.keys(outcome).length ? { ...outcome } : undefined;
}

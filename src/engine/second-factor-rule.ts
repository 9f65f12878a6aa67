import { errors, type FindAccount, type KoaContextWithOIDC } from 'oidc-provider';
import { LOGIN_POLICY } from '../domain/policies/login.ts';
import type { EffectivePolicy } from '../domain/policies/kind.ts';
import type { UserLookup } from './accounts.ts';
import { MFA_ACR } from './acr.ts';
import { spaceSeparated } from '../domain/space-separated.ts';

/**
 * Whether the login policy of the user's org forces a second factor on a
 * sign-in of theirs with the methods `amr` (forceMfa; humans only): not on
 * one through an external provider (`fed`) while forceMfaLocalOnly says so.
 */
export type ForcedMfa = (accountId: string, amr?: readonly string[]) => Promise<boolean>;

export function forcedMfaOf(lookupUser: UserLookup, policies: EffectivePolicy): ForcedMfa {
  return async (accountId, amr) => {
    const user = await lookupUser(accountId);
    if (user?.type !== 'human') return false;
    const policy = await policies(LOGIN_POLICY, user.org_id);
    return policy.forceMfa && !(policy.forceMfaLocalOnly && amr?.includes('fed'));
  };
}

/** An app asks for a second factor with acr_values=mfa (OIDC Core 3.1.2.1). */
export function mfaRequested(acrValues: unknown): boolean {
  return spaceSeparated(acrValues).includes(MFA_ACR);
}

/**
 * The one rule of forceMfa and acr_values=mfa: a sign-in of `accountId` for
 * a request with these acr_values owes a second factor. The login pages ask
 * it of a fresh sign-in, the interaction policy of a browser session, the
 * token endpoint of codes and refresh tokens.
 */
export async function secondFactorRequired(forced: ForcedMfa, accountId: string, acrValues: unknown, amr?: readonly string[]): Promise<boolean> {
  return mfaRequested(acrValues) || forced(accountId, amr);
}

/** A sign-in whose `acr` does not show a second factor, of which one is required. */
export async function secondFactorMissing(forced: ForcedMfa, accountId: string, acrValues: unknown, acr: unknown, amr?: unknown): Promise<boolean> {
  return acr !== MFA_ACR && secondFactorRequired(forced, accountId, acrValues, Array.isArray(amr) ? amr : undefined);
}

/** What the token endpoint hands findAccount: the code, device code or refresh token being redeemed. */
interface RedeemedToken {
  kind?: string;
  acr?: string;
  amr?: string[];
  sessionUid?: string;
}

const FROM_SIGN_IN = new Set(['AuthorizationCode', 'DeviceCode', 'RefreshToken']);

/**
 * The token endpoint asks for the account of every code, device code and
 * refresh token it redeems: one that came from a browser sign-in without a
 * second factor yields no tokens once forceMfa applies to its user
 * (`invalid_grant`), so a refresh token of a password-only session ends
 * when the org turns forceMfa on. Tokens of machine grants and exchanges
 * carry no sign-in (no session) and pass.
 */
export function secondFactorAtTokenEndpoint(findAccount: FindAccount, forced: ForcedMfa): FindAccount {
  return async (ctx: KoaContextWithOIDC, sub, token) => {
    const redeemed = token as RedeemedToken | undefined;
    if (
      ctx.oidc?.route === 'token' &&
      redeemed?.sessionUid &&
      FROM_SIGN_IN.has(redeemed.kind ?? '') &&
      (await secondFactorMissing(forced, sub, undefined, redeemed.acr, redeemed.amr))
    ) {
      throw new errors.CustomOIDCProviderError('invalid_grant', 'the login policy requires a second factor: sign in again');
    }
    return findAccount(ctx, sub, token);
  };
}

import type { ClaimHookFunction } from '../domain/token-hooks.ts';
import { spaceSeparated } from '../domain/space-separated.ts';

// Where the token hooks (docs/actions.md, "Token hooks") meet the engine:
// `preuserinfo` in the account's claims (accounts.ts), `preaccesstoken` in
// the access token's extra claims. The calls themselves are
// src/commands/token-hooks.ts, handed in as TokenHooks.

/** Who a token is for, as the hooks are told. */
export interface HookSubject {
  userId: string;
  clientId: string;
  scopes: string[];
  /** The claims about to be released (preuserinfo); otherwise the user's own. */
  userinfo?: Record<string, unknown>;
}

export interface TokenHooks {
  /**
   * Calls the function's targets in order and answers the claims they add
   * (the reserved ones already dropped), or undefined when no execution is
   * set: then it costs no I/O. Throws TokenHookFailed when a target with
   * interruptOnError fails.
   */
  run(name: ClaimHookFunction, subject: HookSubject): Promise<Record<string, unknown> | undefined>;
}

/** A failing hook with interruptOnError: the engine answers `server_error`. The message names the target, never its answer. */
export class TokenHookFailed extends Error {
  override name = 'TokenHookFailed';
}

/**
 * Carries the preuserinfo hooks' claims on an account's claim set past the
 * engine's filter by scope (engine-overrides.ts): a symbol, so no claim
 * name can collide with it, and object spread keeps it.
 */
export const HOOK_CLAIMS = Symbol('token hook claims');

/** Where an access token record keeps the preaccesstoken hooks' claims: its `extra`, stored with it, so introspection shows what the JWT carries. */
export const HOOK_CLAIMS_EXTRA = 'portcullis:hook_claims';

/** The hooks' claims an access token record holds, if any. */
export function hookClaimsOf(extra: Record<string, unknown> | undefined): Record<string, unknown> {
  const claims = extra?.[HOOK_CLAIMS_EXTRA];
  return claims && typeof claims === 'object' && !Array.isArray(claims) ? (claims as Record<string, unknown>) : {};
}

interface TokenFields {
  accountId?: string;
  clientId?: string;
  scope?: string;
  client?: { machine_user_id?: string };
}

/** The preaccesstoken hooks' claims for a token being issued, as an `extra` entry; none without a user (or without hooks). */
export async function accessTokenHookClaims(hooks: TokenHooks | undefined, token: TokenFields): Promise<Record<string, unknown> | undefined> {
  const userId = token.accountId ?? token.client?.machine_user_id;
  if (!hooks || !userId) return undefined;
  const claims = await hooks.run('preaccesstoken', { userId, clientId: token.clientId ?? '', scopes: spaceSeparated(token.scope) });
  return claims && Object.keys(claims).length ? { [HOOK_CLAIMS_EXTRA]: claims } : undefined;
}

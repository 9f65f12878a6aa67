import { API_SCOPE } from './claims.ts';

/**
 * Tokens with the API scope open this service's admin and management API
 * with the user's roles, so only clients marked `iam_api_access` may hold
 * it: machine users, and apps of the instance's first org that an instance
 * owner opted in (adapters/clients.ts; docs/security.md).
 */
export function mayHoldApiScope(client: object | undefined): boolean {
  return (client as { iam_api_access?: unknown } | undefined)?.iam_api_access === true;
}

/** The scopes a client may be granted out of those it asked for: fewer than asked, never an error (RFC 6749 3.3). */
export function grantableScopes(client: object | undefined, scopes: Iterable<string>): string[] {
  const list = [...scopes];
  return mayHoldApiScope(client) ? list : list.filter((scope) => scope !== API_SCOPE);
}

interface ScopedGrant {
  addOIDCScope(scope: string): void;
  rejectOIDCScope(scope: string): void;
}

/**
 * Adds what a client may be granted to its grant. For a client that may not
 * hold the API scope, the scope is marked rejected: the engine then neither
 * asks for consent to it again nor puts it in a token, even if an older
 * grant held it.
 */
export function addGrantableScopes(grant: ScopedGrant, client: object | undefined, scopes: Iterable<string>): void {
  const granted = grantableScopes(client, scopes);
  if (granted.length) grant.addOIDCScope(granted.join(' '));
  if (!mayHoldApiScope(client)) grant.rejectOIDCScope(API_SCOPE);
}

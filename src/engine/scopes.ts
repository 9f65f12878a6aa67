import { errors } from 'oidc-provider';
import { KNOWN_SCOPES } from './claims.ts';
import { spaceSeparated } from '../domain/space-separated.ts';

/**
 * The one parser of a `scope` parameter for the grants we handle ourselves
 * (RFC 6749 3.3): space-delimited, repeated values once, and only scopes
 * this service knows — the engine would drop unknown ones silently.
 */
function knownScopes(raw: string): string[] {
  const scopes = [...new Set(spaceSeparated(raw))];
  const unknown = scopes.find((scope) => !KNOWN_SCOPES.has(scope));
  if (unknown) throw new errors.InvalidScope(`unknown scope ${unknown}`, unknown);
  return scopes;
}

/** A `scope` the grant requires (client credentials, JWT profile). */
export function requestedScopes(raw: unknown): string[] {
  const scopes = typeof raw === 'string' ? knownScopes(raw) : [];
  if (!scopes.length) throw new errors.InvalidRequest('missing required parameter scope');
  return scopes;
}

/** A `scope` the grant may take (token exchange); undefined when none is given. */
export function optionalScopes(raw: unknown): string[] | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw new errors.InvalidRequest('scope must be given once');
  const scopes = knownScopes(raw);
  return scopes.length ? scopes : undefined;
}

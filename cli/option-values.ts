import { UsageError, type Values } from './args.ts';
import { ACCESS_TOKEN_TYPES, APP_TYPES, AUTH_METHODS, GRANT_TYPES, RESPONSE_TYPES } from '../src/domain/apps.ts';
import { MACHINE_ACCESS_TOKEN_TYPES } from '../src/domain/users.ts';

// Option values read from the parsed command line, and the friendly values
// of the API's enums: a value that does not fit is a usage error (exit 2).

export function str(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

export function list(values: Values, name: string): string[] {
  const value = values[name];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Maps a friendly option value onto the API enum; anything else is a usage error. */
export function mapped(command: string, option: string, value: string, table: Record<string, string>): string {
  const key = value.toLowerCase().replaceAll('-', '_');
  const found = Object.entries(table).find(([friendly]) => friendly.replaceAll('-', '_') === key);
  if (!found) throw new UsageError(`--${option} must be one of ${Object.keys(table).join(', ')} (got '${value}')`, command);
  return found[1];
}

/** A whole number option (0 allowed), or a usage error. */
export function count(command: string, values: Values, name: string): number | undefined {
  const value = str(values, name);
  if (value === undefined) return undefined;
  if (!/^\d{1,10}$/.test(value) || Number(value) > 2147483647) throw new UsageError(`--${name} must be a whole number from 0 (got '${value}')`, command);
  return Number(value);
}

/** An --expires value as RFC 3339 (`2030-01-01` → `2030-01-01T00:00:00.000Z`). */
export function expiration(command: string, values: Values): { expirationDate?: string } {
  const value = str(values, 'expires');
  if (value === undefined) return {};
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new UsageError(`--expires must be an ISO 8601 date or date-time (got '${value}')`, command);
  return { expirationDate: new Date(time).toISOString() };
}

/**
 * The option values of an API enum: its names without their common prefix,
 * lowercase, words joined by `joiner` (`OIDC_APP_TYPE_USER_AGENT` → `user-agent`).
 */
function choices(names: readonly string[], prefix: string, joiner: '-' | '_'): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name.slice(prefix.length).toLowerCase().replaceAll('_', joiner), name]));
}

/** `web (default), user-agent or native`: the values for a help line, the default marked. */
export function oneOf(table: Record<string, string>, fallback: string): string {
  const names = Object.entries(table).map(([value, name]) => (name === fallback ? `${value} (default)` : value));
  return `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

// The enums are the service's own (src/domain); response and grant types keep OAuth's spelling (id_token, refresh_token).
export const APP_TYPE_CHOICES = choices(APP_TYPES, 'OIDC_APP_TYPE_', '-');
export const AUTH_METHOD_CHOICES = choices(Object.keys(AUTH_METHODS), 'OIDC_AUTH_METHOD_TYPE_', '-');
export const RESPONSE_TYPE_CHOICES = choices(Object.keys(RESPONSE_TYPES), 'OIDC_RESPONSE_TYPE_', '_');
export const GRANT_TYPE_CHOICES = choices(Object.keys(GRANT_TYPES), 'OIDC_GRANT_TYPE_', '_');
export const APP_TOKEN_TYPE_CHOICES = choices(Object.keys(ACCESS_TOKEN_TYPES), 'OIDC_TOKEN_TYPE_', '-');
export const USER_TOKEN_TYPE_CHOICES = choices(MACHINE_ACCESS_TOKEN_TYPES, 'ACCESS_TOKEN_TYPE_', '-');

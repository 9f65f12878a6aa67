/**
 * The values of a space-delimited parameter (RFC 6749 3.3 `scope`, OIDC
 * Core's `prompt`, `response_type`, `acr_values`, `ui_locales`): empty
 * entries dropped; anything but a string (missing, repeated) has none.
 */
export function spaceSeparated(value: unknown): string[] {
  return typeof value === 'string' ? value.split(' ').filter(Boolean) : [];
}

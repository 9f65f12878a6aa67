import type { KoaContextWithOIDC } from 'oidc-provider';

/**
 * Authentication context classes (OIDC Core 2, `acr`) a login achieves:
 * `mfa` with a second factor, or a passkey with user verification (something
 * held, unlocked by something known or been); `pwd` with the password alone.
 * Discovery advertises them (`acr_values_supported`); `acr_values=mfa`
 * requires a second factor (interaction-policy.ts and the login pages).
 */
/** The acr of a sign-in with a second factor: what acr_values=mfa and forceMfa require (second-factor-rule.ts). */
export const MFA_ACR = 'mfa';
export const ACR_VALUES = ['pwd', MFA_ACR] as const;

/** The acr of a login that used the methods `amr` (RFC 8176). */
export function acrOf(amr: readonly string[]): (typeof ACR_VALUES)[number] {
  return amr.includes('mfa') || (amr.includes('hwk') && amr.includes('user')) ? MFA_ACR : 'pwd';
}

interface RequestedAcr {
  essential?: boolean;
  value?: unknown;
  values?: unknown;
}

/**
 * The `claims` parameter (OIDC Core 5.5) may ask for an `acr` of the ID
 * token too (5.5.1.1). One rule decides which login is needed, the one of
 * `acr_values`: so an acr asked for there is read as `acr_values` when the
 * request has none (the engine then asks for it as acr_values asks), and
 * `acr_values=mfa` is met the same way whichever parameter carried it.
 */
export function acrFromClaimsParameter(ctx: KoaContextWithOIDC, claims: { id_token?: { acr?: RequestedAcr | null } }): void {
  const acr = claims.id_token?.acr;
  if (!acr || ctx.oidc.params?.acr_values) return;
  const asked = Array.isArray(acr.values) ? acr.values : acr.value !== undefined ? [acr.value] : [];
  const values = asked.filter((value): value is string => typeof value === 'string' && /^[\x21-\x7e]{1,64}$/.test(value));
  if (values.length) (ctx.oidc.params as Record<string, unknown>).acr_values = values.join(' ');
}

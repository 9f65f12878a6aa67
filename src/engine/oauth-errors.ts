import { errors, type KoaContextWithOIDC } from 'oidc-provider';

// The engine's own error classes, where their defaults do not say what RFC
// 6749 5.2 and our docs (docs/oidc.md) say, and the one way our rules
// render an error outside the engine's handlers.

export type OAuthError = InstanceType<typeof errors.OIDCProviderError>;

/** `invalid_grant` with our description (the engine's class hides it in error_detail). */
export function invalidGrant(description: string): OAuthError {
  return new errors.CustomOIDCProviderError('invalid_grant', description);
}

/** A failed client authentication: 401, unlike the engine's generic invalid_client. */
export function invalidClient(description: string): OAuthError {
  return Object.assign(new errors.InvalidClient(description), { status: 401, statusCode: 401 });
}

/** RFC 6749 5.2 JSON, `no-store`, and a Basic challenge on a 401 when Basic was tried. */
export function renderOAuthError(ctx: KoaContextWithOIDC, err: OAuthError, basicTried: boolean): void {
  ctx.status = err.status;
  ctx.set('Cache-Control', 'no-store');
  if (err.status === 401 && basicTried) ctx.set('WWW-Authenticate', 'Basic realm="portcullis"');
  ctx.body = { error: err.error, error_description: (err as { error_description?: string }).error_description ?? err.message };
}

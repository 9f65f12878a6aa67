import type { KoaContextWithOIDC } from 'oidc-provider';
import { noteRefusal } from '../request-context.ts';

type Next = () => Promise<void>;

/** An RFC 6749 5.2 error answer's `error` and `error_description`, for the request's log line. */
export function noteOAuthError(ctx: KoaContextWithOIDC, out: { error?: unknown; error_description?: unknown }): void {
  if (typeof out.error !== 'string') return;
  noteRefusal(ctx.req, { code: out.error, ...(typeof out.error_description === 'string' ? { message: out.error_description } : {}) });
}

/**
 * The engine's JSON answers of 4xx (token, introspection, revocation,
 * userinfo, PAR, device authorization — and our rules around them) carry
 * their reason into the access log; the pages it renders note theirs in
 * `renderError`.
 */
export async function noteOAuthRefusals(ctx: KoaContextWithOIDC, next: Next): Promise<void> {
  await next();
  const body = ctx.body as unknown;
  if (ctx.status >= 400 && ctx.status < 500 && body && typeof body === 'object' && !Buffer.isBuffer(body) && 'error' in body) {
    noteOAuthError(ctx, body as { error?: unknown; error_description?: unknown });
  }
}

import type { AuthThrottle } from '../security/auth-throttle.ts';
import { JWT_BEARER_GRANT } from '../domain/grant-types.ts';
import type { EngineRule } from './rule-dispatch.ts';

/**
 * Client authentication at the token, introspection and revocation
 * endpoints under the throttle of failed authentication: a blocked address
 * gets 429 before anything is read; an unknown client, a wrong secret, an
 * invalid client assertion (invalid_client) or an invalid JWT profile
 * assertion (invalid_grant of that grant) counts against the address.
 */
export function throttleClientAuthentication(throttle: AuthThrottle): EngineRule {
  return async (ctx, next) => {
    const wait = throttle.retryAfterOf(ctx.req);
    if (wait !== undefined) {
      ctx.status = 429;
      ctx.set({ 'Retry-After': String(wait), 'Cache-Control': 'no-store' });
      ctx.body = { error: 'invalid_request', error_description: 'too many failed authentication attempts' };
      return;
    }
    await next();
    const error = (ctx.body as { error?: unknown } | undefined)?.error;
    const failed =
      (ctx.status === 401 && error === 'invalid_client') || (ctx.status === 400 && error === 'invalid_grant' && ctx.state.grantType === JWT_BEARER_GRANT);
    if (failed) await throttle.failed(throttle.addressOf(ctx.req));
  };
}

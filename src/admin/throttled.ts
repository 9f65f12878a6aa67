import type { Middleware } from 'koa';
import type { AuthThrottle } from '../security/auth-throttle.ts';
import { ResourceExhausted, Unauthenticated } from '../domain/errors.ts';

export const TOO_MANY_FAILURES = 'too many failed authentication attempts';

/**
 * Bearer authentication under the throttle of failed authentication: a
 * blocked address is refused (429) before its token is looked at, and a
 * presented token that does not authenticate counts against the address.
 * Requests that authenticate touch no counter.
 */
export function throttledAuthentication(authenticate: Middleware, throttle: AuthThrottle): Middleware {
  return async (ctx, next) => {
    const wait = throttle.retryAfterOf(ctx.req);
    if (wait !== undefined) throw new ResourceExhausted(TOO_MANY_FAILURES, wait);
    let authenticated = false;
    try {
      await authenticate(ctx, () => {
        authenticated = true;
        return next();
      });
    } catch (err) {
      if (!authenticated && err instanceof Unauthenticated && ctx.get('authorization')) await throttle.failed(throttle.addressOf(ctx.req));
      throw err;
    }
  };
}

import type { Middleware } from 'koa';
import type { Logger } from '../logger.ts';
import { RETRY_AFTER_SECONDS, StoreUnavailable } from '../storage/outage.ts';
import { noteRefusal } from '../request-context.ts';

/** RFC 9110 9.3: the methods every server knows of, even where a path serves none of them. */
const RFC9110_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

/**
 * Last line of defence for our own routes: a store outage becomes 503, an
 * error nobody mapped a 500 with a request id to quote, and its details go to the log only.
 */
export function errorBoundary(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      // The routers answer 501 to a method none of their routes declares;
      // RFC 9110 15.6.2 keeps 501 for methods the server does not know at all.
      if (ctx.status === 501 && RFC9110_METHODS.has(ctx.method)) ctx.status = 405;
    } catch (err) {
      if (err instanceof StoreUnavailable) {
        ctx.status = 503;
        ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
        ctx.body = { error: err.error, error_description: err.error_description };
        return;
      }
      const status = (err as { status?: number; expose?: boolean }).status;
      if (status && status < 500 && (err as { expose?: boolean }).expose) {
        ctx.status = status;
        ctx.body = { error: 'invalid_request', error_description: (err as Error).message };
        noteRefusal(ctx.req, { code: 'invalid_request', message: (err as Error).message });
        return;
      }
      log.error({ err, requestId: ctx.state.requestId }, 'unhandled error');
      ctx.status = 500;
      ctx.body = { error: 'server_error', error_description: `unexpected error (request id ${ctx.state.requestId})` };
    }
  };
}

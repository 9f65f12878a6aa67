import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import type { Logger } from '../logger.ts';

const requestIds = new WeakMap<IncomingMessage, string>();
const INCOMING_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The id of a request, also for code that only sees the raw request (the engine). */
export function requestIdOf(req: IncomingMessage): string | undefined {
  return requestIds.get(req);
}

/**
 * Gives each request an id (a sane incoming X-Request-Id, or a new one),
 * echoes it, and writes one access log line when the response is finished,
 * which also covers responses the engine writes itself. The path is logged
 * without its query string: queries carry codes and tokens.
 */
export function requestContext(log: Logger): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = INCOMING_ID.test(incoming) ? incoming : randomUUID();
    requestIds.set(ctx.req, requestId);
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    ctx.res.once('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log.info({ requestId, method: ctx.method, path: ctx.path, status: ctx.res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
    });
    await next();
  };
}

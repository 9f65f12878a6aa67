import Koa from 'koa';
import type Router from '@koa/router';
import type { Logger } from './logger.ts';
import type { EngineHolder } from './engine/engine-holder.ts';
import { requestContext } from './http/request-context.ts';
import { errorBoundary } from './http/error-boundary.ts';

export interface AppParts {
  log: Logger;
  trustProxy: boolean;
  engine: EngineHolder;
  /** Our own routes, tried in order before the engine. */
  routers: Router[];
}

/**
 * The engine answers this path unconditionally, but SEED 1 says the service
 * has no OAuth 2.0 Authorization Server Metadata endpoint.
 */
const NOT_SERVED = new Set(['/.well-known/oauth-authorization-server']);

export function createApp({ log, trustProxy, engine, routers }: AppParts): Koa {
  const app = new Koa({ proxy: trustProxy });
  app.use(requestContext(log));
  app.use(errorBoundary(log));
  app.use(async (ctx, next) => {
    if (!NOT_SERVED.has(ctx.path)) return next();
    ctx.status = 404;
    ctx.body = { error: 'not_found', error_description: 'this service publishes OpenID Connect discovery at /.well-known/openid-configuration' };
  });
  for (const router of routers) app.use(router.routes()).use(router.allowedMethods());
  app.use(async (ctx) => {
    ctx.respond = false;
    await engine.handle(ctx.req, ctx.res);
  });
  return app;
}

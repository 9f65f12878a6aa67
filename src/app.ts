import Koa from 'koa';
import type Router from '@koa/router';
import type { Logger } from './logger.ts';
import type { EngineHolder } from './engine/engine-holder.ts';
import { requestContext } from './http/request-context.ts';
import { errorBoundary } from './http/error-boundary.ts';
import { requestMetrics, type Metrics } from './http/metrics.ts';

/** Requests still being handled, so shutdown closes the pools only after them. */
export interface InFlight {
  count: number;
}

export interface AppParts {
  inFlight: InFlight;
  log: Logger;
  metrics: Metrics;
  issuer: string;
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

/** Paths only the engine serves (SPEC 2); our routers own /admin, /management, /v2, /ui and the health paths. */
const ENGINE_PREFIXES = ['/oauth/', '/oidc/', '/.well-known/openid-configuration'];

/**
 * The engine builds every URL it publishes from the request's host and
 * protocol. Pinning both to the ISSUER keeps a forged Host header out of
 * discovery (and out of caches), and marks cookies Secure exactly when the
 * issuer is https. The engine trusts these headers (provider.proxy), so any
 * client-sent X-Forwarded-For is dropped unless TRUST_PROXY is on.
 */
function pinToIssuer(issuer: string, trustProxy: boolean): (req: Koa.Context['req']) => void {
  const url = new URL(issuer);
  const proto = url.protocol.slice(0, -1);
  return (req) => {
    req.headers['x-forwarded-host'] = url.host;
    req.headers['x-forwarded-proto'] = proto;
    if (!trustProxy) delete req.headers['x-forwarded-for'];
  };
}

export function createApp({ inFlight, log, metrics, issuer, trustProxy, engine, routers }: AppParts): Koa {
  const pin = pinToIssuer(issuer, trustProxy);
  const app = new Koa({ proxy: trustProxy });
  app.use(async (_ctx, next) => {
    inFlight.count += 1;
    try {
      await next();
    } finally {
      inFlight.count -= 1;
    }
  });
  app.use(requestContext(log));
  app.use(requestMetrics(metrics));
  app.use(async (ctx, next) => {
    pin(ctx.req);
    await next();
  });
  app.use(errorBoundary(log));
  app.use(async (ctx, next) => {
    if (!NOT_SERVED.has(ctx.path)) return next();
    ctx.status = 404;
    ctx.body = { error: 'not_found', error_description: 'this service publishes OpenID Connect discovery at /.well-known/openid-configuration' };
  });
  const toEngine = async (ctx: Koa.Context) => {
    ctx.respond = false;
    await engine.handle(ctx.req, ctx.res);
  };
  // The engine's endpoints are the hot paths: they skip our routers' matching.
  app.use(async (ctx, next) => (ENGINE_PREFIXES.some((prefix) => ctx.path.startsWith(prefix)) ? toEngine(ctx) : next()));
  for (const router of routers) app.use(router.routes()).use(router.allowedMethods());
  app.use(toEngine);
  return app;
}

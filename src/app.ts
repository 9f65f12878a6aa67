import type { IncomingMessage, RequestListener } from 'node:http';
import Koa from 'koa';
import type Router from '@koa/router';
import type { Logger } from './logger.ts';
import type { EngineHolder } from './engine/engine-holder.ts';
import { DISCOVERY_PATH } from './engine/routes.ts';
import { requestContext, requestIdOf } from './http/request-context.ts';
import { errorBoundary } from './http/error-boundary.ts';
import { recordMatchedRoute, requestMetrics, type Metrics } from './http/metrics.ts';

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
const ENGINE_PREFIXES = ['/oauth/', '/oidc/', DISCOVERY_PATH];

/**
 * The engine builds every URL it publishes from the request's host and
 * protocol. Pinning both to the ISSUER keeps a forged Host header out of
 * discovery (and out of caches), and marks cookies Secure exactly when the
 * issuer is https. The engine trusts these headers (provider.proxy), so any
 * client-sent X-Forwarded-For is dropped unless TRUST_PROXY is on.
 */
function pinToIssuer(issuer: string, trustProxy: boolean): (req: IncomingMessage) => void {
  const url = new URL(issuer);
  const proto = url.protocol.slice(0, -1);
  return (req) => {
    req.headers['x-forwarded-host'] = url.host;
    req.headers['x-forwarded-proto'] = proto;
    if (!trustProxy) delete req.headers['x-forwarded-for'];
  };
}

/**
 * The server's request listener. Every request gets its id, access log line,
 * metrics and issuer-pinned headers here, on the raw request. Engine paths
 * then go straight to the engine, which is a Koa app itself: a second Koa
 * context around it would only cost time on the hot paths. Everything else
 * goes through our Koa app and its routers.
 */
export function createApp({ inFlight, log, metrics, issuer, trustProxy, engine, routers }: AppParts): RequestListener {
  const pin = pinToIssuer(issuer, trustProxy);
  const identify = requestContext(log);
  const measure = requestMetrics(metrics);
  const ours = ourRoutes(log, trustProxy, engine, routers).callback();
  return (req, res) => {
    inFlight.count += 1;
    identify(req, res);
    measure(req, res);
    pin(req);
    const url = req.url ?? '/';
    const handled = ENGINE_PREFIXES.some((prefix) => url.startsWith(prefix)) ? engine.handle(req, res) : ours(req, res);
    // Koa's callbacks settle only after the response; they never reject
    // (errors become responses), but a crash here would take the process.
    Promise.resolve(handled)
      .catch((err: unknown) => log.error({ err, requestId: requestIdOf(req) }, 'unhandled error'))
      .finally(() => {
        inFlight.count -= 1;
      });
  };
}

function ourRoutes(log: Logger, trustProxy: boolean, engine: EngineHolder, routers: Router[]): Koa {
  const app = new Koa({ proxy: trustProxy });
  app.use(async (ctx, next) => {
    ctx.state.requestId = requestIdOf(ctx.req);
    await next();
  });
  app.use(recordMatchedRoute);
  app.use(errorBoundary(log));
  app.use(async (ctx, next) => {
    if (!NOT_SERVED.has(ctx.path)) return next();
    ctx.status = 404;
    ctx.body = { error: 'not_found', error_description: `this service publishes OpenID Connect discovery at ${DISCOVERY_PATH}` };
  });
  for (const router of routers) app.use(router.routes()).use(router.allowedMethods());
  // Anything no router claims is the engine's to answer (and to 404).
  app.use(async (ctx) => {
    ctx.respond = false;
    await engine.handle(ctx.req, ctx.res);
  });
  return app;
}

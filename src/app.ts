import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import Koa from 'koa';
import type Router from '@koa/router';
import type { Logger } from './logger.ts';
import type { EngineHolder } from './engine/engine-holder.ts';
import { DISCOVERY_PATH } from './engine/routes.ts';
import { engineDoor, methodsIfNotAllowed } from './http/engine-paths.ts';
import { requestContext, requestIdOf } from './request-context.ts';
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
  /** POST at authorization and end_session (ENABLE_HTTP_POST_METHODS); else 405. */
  postMethods: boolean;
  engine: EngineHolder;
  /** Our own routes, tried in order. */
  routers: Router[];
}

/**
 * Another spelling of an engine path, or one the engine would answer but this
 * service does not serve (OAuth 2.0 Authorization Server Metadata: the
 * service publishes OpenID Connect discovery only).
 */
const NOT_FOUND_BODY = JSON.stringify({ error: 'not_found', error_description: `no endpoint at this path; OpenID Connect discovery is at ${DISCOVERY_PATH}` });

function notFound(res: ServerResponse): void {
  res.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(NOT_FOUND_BODY) });
  res.end(NOT_FOUND_BODY);
}

function methodNotAllowed(res: ServerResponse, method: string, allowed: readonly string[]): void {
  const body = JSON.stringify({ error: 'invalid_request', error_description: `${method} is not allowed here; use ${allowed.join(', ')}` });
  res.writeHead(405, {
    Allow: allowed.join(', '),
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

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
 * metrics and issuer-pinned headers here, on the raw request. Engine paths,
 * in their one exact spelling, then go straight to the engine, which is a Koa
 * app itself: a second Koa context around it would only cost time on the hot
 * paths. Other spellings of them are 404 (src/http/engine-paths.ts);
 * everything else goes through our Koa app and its routers.
 */
export function createApp({ inFlight, log, metrics, issuer, trustProxy, postMethods, engine, routers }: AppParts): RequestListener {
  const pin = pinToIssuer(issuer, trustProxy);
  const identify = requestContext(log);
  const measure = requestMetrics(metrics);
  const ours = ourRoutes(log, trustProxy, routers).callback();
  return (req, res) => {
    inFlight.count += 1;
    identify(req, res);
    measure(req, res);
    pin(req);
    // Every answer (JSON of the APIs and the engine, pages, files) is read as
    // the type it says it is, never sniffed into HTML or script.
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const target = req.url ?? '/';
    const door = engineDoor(target);
    const allowed = door === 'engine' ? methodsIfNotAllowed(req.method ?? 'GET', target, postMethods) : undefined;
    const handled = allowed
      ? methodNotAllowed(res, req.method ?? 'GET', allowed)
      : door === 'engine'
        ? engine.handle(req, res)
        : door === 'ours'
          ? ours(req, res)
          : notFound(res);
    // Koa's callbacks settle only after the response; they never reject
    // (errors become responses), but a crash here would take the process.
    Promise.resolve(handled)
      .catch((err: unknown) => log.error({ err, requestId: requestIdOf(req) }, 'unhandled error'))
      .finally(() => {
        inFlight.count -= 1;
      });
  };
}

function ourRoutes(log: Logger, trustProxy: boolean, routers: Router[]): Koa {
  const app = new Koa({ proxy: trustProxy });
  app.use(async (ctx, next) => {
    ctx.state.requestId = requestIdOf(ctx.req);
    await next();
  });
  app.use(recordMatchedRoute);
  app.use(errorBoundary(log));
  for (const router of routers) app.use(router.routes()).use(router.allowedMethods());
  // Nothing here is the engine's: a path no router claims is a 404.
  app.use(async (ctx) => {
    ctx.status = 404;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = JSON.parse(NOT_FOUND_BODY);
  });
  return app;
}
